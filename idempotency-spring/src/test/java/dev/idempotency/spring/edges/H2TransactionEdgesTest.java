package dev.idempotency.spring.edges;

import dev.idempotency.jdbc.JdbcDialect;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

/** The transaction edges on embedded H2. */
class H2TransactionEdgesTest extends AbstractTransactionEdgesTest {

    @Override
    protected DataSource openDataSource() {
        return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.h2();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        ((EmbeddedDatabase) dataSource).shutdown();
    }
}
