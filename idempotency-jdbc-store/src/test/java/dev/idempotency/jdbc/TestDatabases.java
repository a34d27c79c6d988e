package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * The real databases of the integration tests, from {@code IDEMPOTENCY_POSTGRES_URL} and
 * {@code IDEMPOTENCY_MARIADB_URL}. Tests needing them are gated on those variables; where a variable is set, an
 * unreachable database fails the test (the pool refuses to start), it never skips it.
 */
final class TestDatabases {

    static final String POSTGRES_URL = "IDEMPOTENCY_POSTGRES_URL";
    static final String MARIADB_URL = "IDEMPOTENCY_MARIADB_URL";

    private TestDatabases() {
    }

    /** A pool on the database named by an environment variable, large enough for the fuzz's threads. */
    static HikariDataSource pool(String variable, int size) {
        return pool(variable, size, null);
    }

    /** The same, with every connection at {@code isolation} (a {@code TRANSACTION_*} name of java.sql.Connection). */
    static HikariDataSource pool(String variable, int size, String isolation) {
        String url = System.getenv(variable);
        if (url == null || url.isBlank()) {
            throw new IllegalStateException(variable + " is not set");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName("idempotency-it-" + variable);
        if (isolation != null) {
            config.setTransactionIsolation(isolation);
        }
        return new HikariDataSource(config);
    }
}
