package dev.idempotency.spring;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

/** The data sources of the suites that run once per database: embedded H2, or a pool on a real server. */
public final class TestDatabases {

    /** The variable naming PostgreSQL's JDBC URL. */
    public static final String POSTGRES_URL = "IDEMPOTENCY_POSTGRES_URL";
    /** The variable naming MariaDB's JDBC URL. */
    public static final String MARIADB_URL = "IDEMPOTENCY_MARIADB_URL";

    private TestDatabases() {
    }

    /** A new embedded H2 database of its own. */
    public static DataSource h2() {
        return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    /**
     * A pool on the server at the URL in {@code urlVariable}; unreachable, it fails (within 10 s), never skips.
     * Twelve connections: eight concurrent callers, each with a connection at a time, and the test.
     */
    public static DataSource pool(String urlVariable, String poolName) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv(urlVariable));
        config.setMaximumPoolSize(12);
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName(poolName);
        return new HikariDataSource(config);
    }

    /** Shuts an embedded database down, or closes a pool. */
    public static void close(DataSource dataSource) {
        if (dataSource instanceof EmbeddedDatabase embedded) {
            embedded.shutdown();
        } else if (dataSource instanceof HikariDataSource pool) {
            pool.close();
        }
    }
}
