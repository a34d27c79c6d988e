package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The databases the benchmarks run on. The JDBC URL comes from the same environment variables as the integration
 * tests ({@code IDEMPOTENCY_POSTGRES_URL}, {@code IDEMPOTENCY_MARIADB_URL}), defaulting to this machine's servers.
 */
public enum Database {

    POSTGRESQL("IDEMPOTENCY_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"),
    MARIADB("IDEMPOTENCY_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test?user=root"),
    H2("IDEMPOTENCY_H2_URL", "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1");

    private final String variable;
    private final String fallback;

    Database(String variable, String fallback) {
        this.variable = variable;
        this.fallback = fallback;
    }

    /** The benchmark parameter's spelling of a database: {@code postgresql}, {@code mariadb}, {@code h2}. */
    public static Database of(String name) {
        return valueOf(name.toUpperCase(java.util.Locale.ROOT));
    }

    public String url() {
        String url = System.getenv(variable);
        return url == null || url.isBlank() ? fallback : url;
    }

    /** A HikariCP pool of {@code size} connections, started and checked. */
    public HikariDataSource pool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName("bench-" + name().toLowerCase(java.util.Locale.ROOT));
        config.setConnectionTimeout(30_000);
        HikariDataSource pool = new HikariDataSource(config);
        try (Connection c = pool.getConnection()) {
            if (!c.isValid(5)) {
                throw new IllegalStateException("no usable connection to " + url());
            }
        } catch (SQLException e) {
            pool.close();
            throw new IllegalStateException("cannot connect to " + this + " at " + url() + ": " + e.getMessage(), e);
        }
        return pool;
    }

    /** Runs statements outside any transaction (DDL, prefill, cleanup). */
    public static void execute(javax.sql.DataSource ds, String... sql) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            for (String statement : sql) {
                s.execute(statement);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("failed: " + String.join("; ", sql) + ": " + e.getMessage(), e);
        }
    }
}
