package dev.idempotency.spring.edges;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The transaction edges on MariaDB, at {@code IDEMPOTENCY_MARIADB_URL}: skipped
 * without the variable, failed (never skipped) when it is set and the database cannot be reached.
 */
@EnabledIfEnvironmentVariable(named = MariaDbTransactionEdgesIT.URL, matches = ".+")
class MariaDbTransactionEdgesIT extends AbstractTransactionEdgesTest {

    static final String URL = "IDEMPOTENCY_MARIADB_URL";

    @Override
    protected DataSource openDataSource() {
        return TestDatabases.pool(TestDatabases.MARIADB_URL, "idempotency-edges-mariadb-it");
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.mariadb();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        TestDatabases.close(dataSource);
    }
}
