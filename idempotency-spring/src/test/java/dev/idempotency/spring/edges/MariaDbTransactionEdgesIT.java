package dev.idempotency.spring.edges;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcDialect;
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
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv(URL));
        config.setMaximumPoolSize(12); // eight concurrent callers, each with a connection at a time, and the test
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName("idempotency-edges-mariadb-it");
        return new HikariDataSource(config);
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.mariadb();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        ((HikariDataSource) dataSource).close();
    }
}
