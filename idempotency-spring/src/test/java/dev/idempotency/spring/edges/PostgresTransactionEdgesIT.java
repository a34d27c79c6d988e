package dev.idempotency.spring.edges;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The transaction edges on PostgreSQL, at {@code IDEMPOTENCY_POSTGRES_URL}: skipped
 * without the variable, failed (never skipped) when it is set and the database cannot be reached.
 */
@EnabledIfEnvironmentVariable(named = PostgresTransactionEdgesIT.URL, matches = ".+")
class PostgresTransactionEdgesIT extends AbstractTransactionEdgesTest {

    static final String URL = "IDEMPOTENCY_POSTGRES_URL";

    @Override
    protected DataSource openDataSource() {
        return TestDatabases.pool(TestDatabases.POSTGRES_URL, "idempotency-edges-it");
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
