package dev.idempotency.spring.tiers;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The tier rules through the aspect on the JDBC store over PostgreSQL, at {@code IDEMPOTENCY_POSTGRES_URL}: skipped
 * without the variable, failed (never skipped) when it is set and the database cannot be reached.
 */
@EnabledIfEnvironmentVariable(named = PostgresSpringTierRulesIT.URL, matches = ".+")
class PostgresSpringTierRulesIT extends AbstractSpringTierRulesTest {

    static final String URL = "IDEMPOTENCY_POSTGRES_URL";

    @Override
    protected DataSource openDataSource() {
        return TestDatabases.pool(TestDatabases.POSTGRES_URL, "idempotency-tier-rules-it");
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.postgresql();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        TestDatabases.close(dataSource);
    }
}
