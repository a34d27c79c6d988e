package dev.idempotency.faults;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcDialect;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * One database of a fault suite: its URL, a pool on it, the suite's uniquely named tables (other builds use the same
 * servers at the same time) and how a connection of it is killed from outside.
 *
 * <p>PostgreSQL and MariaDB kill for real, from a second connection ({@code pg_terminate_backend}, {@code KILL}),
 * and wait until the victim is gone from the server's list of sessions. H2 cannot kill a session of its own from
 * another one the same way, so {@link FaultInjector} stands in for the server there (it rolls the victim's work back
 * and fails every later call on it).
 */
final class FaultDatabase implements AutoCloseable {

    enum Kind {
        H2("h2", "dev/idempotency/jdbc/schema-h2.sql"),
        POSTGRESQL("postgresql", "dev/idempotency/jdbc/schema-postgresql.sql"),
        MARIADB("mariadb", "dev/idempotency/jdbc/schema-mariadb.sql");

        final String label;
        final String schema;

        Kind(String label, String schema) {
            this.label = label;
            this.schema = schema;
        }
    }

    static final String POSTGRES_URL = "IDEMPOTENCY_POSTGRES_URL";
    static final String MARIADB_URL = "IDEMPOTENCY_MARIADB_URL";

    final Kind kind;
    final String url;
    final Tables tables;
    private final HikariDataSource pool;

    private FaultDatabase(Kind kind, String url, Tables tables, int poolSize) {
        this.kind = kind;
        this.url = url;
        this.tables = tables;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(poolSize);
        // H2 in AUTO_SERVER mode serves other processes only while this one holds the database open
        config.setMinimumIdle(kind == Kind.H2 ? 1 : 0);
        config.setConnectionTimeout(30_000);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName("idempotency-faults-" + kind.label);
        this.pool = new HikariDataSource(config);
    }

    /** The database of the variable; set and unreachable, the pool refuses to start: the suite fails, never skips. */
    static FaultDatabase fromEnvironment(Kind kind, String variable, int poolSize) {
        String url = System.getenv(variable);
        if (url == null || url.isBlank()) {
            throw new IllegalStateException(variable + " is not set");
        }
        return new FaultDatabase(kind, url, Tables.unique(), poolSize);
    }

    /**
     * A file-based H2 database under target/ in AUTO_SERVER mode, so that a child JVM shares it (the first process
     * serves it over TCP to the others).
     */
    static FaultDatabase h2(int poolSize) {
        Path dir = Path.of("target", "faults-h2").toAbsolutePath();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String file = dir.resolve("db-" + UUID.randomUUID()).toString().replace('\\', '/');
        return new FaultDatabase(Kind.H2, "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE;DB_CLOSE_DELAY=-1",
                Tables.unique(), poolSize);
    }

    /** The tables another process of the suite made (the child JVM joins its parent's database). */
    static FaultDatabase attach(Kind kind, String url, Tables tables, int poolSize) {
        return new FaultDatabase(kind, url, tables, poolSize);
    }

    /** The pool itself, without faults. */
    HikariDataSource pool() {
        return pool;
    }

    void createTables() {
        String script = shipped().replace("idempotency_record", tables.idempotency())
                + "\nCREATE TABLE " + tables.business() + " (id VARCHAR(64) PRIMARY KEY, kind VARCHAR(32) NOT NULL,"
                + " ref VARCHAR(255) NOT NULL, val VARCHAR(255) NOT NULL);\n"
                + "CREATE TABLE " + tables.accounts() + " (id VARCHAR(16) PRIMARY KEY, balance INT NOT NULL);\n";
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8))).execute(pool);
        if (kind == Kind.MARIADB) {
            // the claim procedure, as the store is meant to be run there: one statement, run as it is
            String procedure = shipped(JdbcDialect.mariadb().claimProcedureLocation().orElseThrow());
            new JdbcTemplate(pool).execute(procedure.replace("idempotency_record", tables.idempotency()));
        }
    }

    void dropTables() {
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        for (String t : new String[] {tables.business(), tables.accounts()}) {
            jdbc.execute("DROP TABLE IF EXISTS " + t);
        }
        JdbcDialect.forProductName(kind.label).dropStatements(tables.idempotency()).forEach(jdbc::execute);
    }

    private String shipped() {
        return shipped(kind.schema);
    }

    private static String shipped(String location) {
        try (InputStream in = new ClassPathResource(location).getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + location, e);
        }
    }

    /** The server's id of a session, asked on the session itself. H2: none (the injector kills it). */
    String sessionId(Connection connection) throws SQLException {
        String sql = switch (kind) {
            case POSTGRESQL -> "SELECT pg_backend_pid()";
            case MARIADB -> "SELECT CONNECTION_ID()";
            case H2 -> "SELECT SESSION_ID()";
        };
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Whether the server can kill a session from another one ({@link #kill}); H2 cannot. */
    boolean killsForReal() {
        return kind != Kind.H2;
    }

    /**
     * Kills the session {@code id} from a connection of its own (never one of the pool's) and waits until the server
     * no longer lists it.
     */
    void kill(String id) {
        try (Connection admin = DriverManager.getConnection(url)) {
            admin.setAutoCommit(true);
            if (kind == Kind.POSTGRESQL) {
                try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?)")) {
                    ps.setInt(1, Integer.parseInt(id));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (!rs.getBoolean(1)) {
                            throw new IllegalStateException("pg_terminate_backend(" + id + ") found no session");
                        }
                    }
                }
            } else if (kind == Kind.MARIADB) {
                try (Statement s = admin.createStatement()) {
                    s.execute("KILL " + Long.parseLong(id));
                }
            } else {
                throw new IllegalStateException("H2 sessions are killed by the FaultInjector");
            }
            Awaitility.await("session " + id + " gone").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(10)).until(() -> !alive(admin, id));
        } catch (SQLException e) {
            throw new IllegalStateException("could not kill session " + id + " on " + kind.label, e);
        }
    }

    /** Whether the server still lists the session {@code id}. */
    boolean alive(String id) {
        try (Connection admin = DriverManager.getConnection(url)) {
            return alive(admin, id);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private boolean alive(Connection admin, String id) throws SQLException {
        String sql = kind == Kind.POSTGRESQL ? "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?"
                : "SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?";
        try (PreparedStatement ps = admin.prepareStatement(sql)) {
            ps.setLong(1, Long.parseLong(id));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }

    /** An H2 file database's files (the database, its lock and trace), once it is shut down. */
    private void deleteH2Files() {
        if (kind != Kind.H2) {
            return;
        }
        String file = url.substring("jdbc:h2:file:".length(), url.indexOf(';'));
        Path path = Path.of(file);
        Path dir = path.getParent();
        String name = path.getFileName().toString();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.getFileName().toString().startsWith(name + ".")).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // target/ is cleaned by the build anyway
        }
    }

    DataSource dataSource() {
        return pool;
    }

    @Override
    public void close() {
        try {
            dropTables();
            if (kind == Kind.H2) {
                new JdbcTemplate(pool).execute("SHUTDOWN");
            }
        } finally {
            pool.close();
            deleteH2Files();
        }
    }
}
