package dev.idempotency.spring.edges;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.TestDatabases;
import javax.sql.DataSource;

/** The transaction edges on embedded H2. */
class H2TransactionEdgesTest extends AbstractTransactionEdgesTest {

    @Override
    protected DataSource openDataSource() {
        return TestDatabases.h2();
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.h2();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        TestDatabases.close(dataSource);
    }
}
