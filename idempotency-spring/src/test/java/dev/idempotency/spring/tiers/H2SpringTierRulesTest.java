package dev.idempotency.spring.tiers;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.TestDatabases;
import javax.sql.DataSource;

/** The tier rules through the aspect on the JDBC store over embedded H2. */
class H2SpringTierRulesTest extends AbstractSpringTierRulesTest {

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
