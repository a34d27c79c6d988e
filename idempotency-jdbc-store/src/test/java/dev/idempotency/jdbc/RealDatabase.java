package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.store.IdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One database for one suite class, registered as {@code @RegisterExtension static final RealDatabase}: a pool on
 * the URL of {@code IDEMPOTENCY_POSTGRES_URL} or {@code IDEMPOTENCY_MARIADB_URL} (or an embedded H2), opened before
 * the class's first test and closed after its last; every table made through {@link #newStore()} is dropped after
 * each test. Suites are gated on the variable; where it is set, an unreachable database fails the suite (the pool
 * refuses to start), it never skips it.
 */
final class RealDatabase implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    static final String POSTGRES_URL = "IDEMPOTENCY_POSTGRES_URL";
    static final String MARIADB_URL = "IDEMPOTENCY_MARIADB_URL";

    private final String variable;
    private final @Nullable String fixedUrl;
    private final JdbcDialect dialect;
    private final int poolSize;
    private final @Nullable String isolation;
    /** Whether stores are given the dialect rather than detecting it (MySQL's statements on a MariaDB server). */
    private final boolean forced;
    /** The script tables are made from: the dialect's, or another shipped one. */
    private final @Nullable String script;
    /** Driver options appended to the URL, or null. */
    private final @Nullable String urlOptions;
    private final List<String> tables = new ArrayList<>();
    private @Nullable HikariDataSource pool;

    private RealDatabase(String variable, @Nullable String fixedUrl, JdbcDialect dialect, int poolSize,
            @Nullable String isolation) {
        this(variable, fixedUrl, dialect, poolSize, isolation, false, null, null);
    }

    private RealDatabase(String variable, @Nullable String fixedUrl, JdbcDialect dialect, int poolSize,
            @Nullable String isolation, boolean forced, @Nullable String script, @Nullable String urlOptions) {
        this.script = script;
        this.urlOptions = urlOptions;
        this.variable = variable;
        this.fixedUrl = fixedUrl;
        this.dialect = dialect;
        this.poolSize = poolSize;
        this.isolation = isolation;
        this.forced = forced;
    }

    /** PostgreSQL with a pool of {@code poolSize}, every connection at the driver's default isolation. */
    static RealDatabase postgres(int poolSize) {
        return new RealDatabase(POSTGRES_URL, null, JdbcDialect.postgresql(), poolSize, null);
    }

    /** MariaDB with a pool of {@code poolSize}, every connection at the driver's default isolation. */
    static RealDatabase mariadb(int poolSize) {
        return new RealDatabase(MARIADB_URL, null, JdbcDialect.mariadb(), poolSize, null);
    }

    /**
     * MariaDB with MySQL's statements and script, set with {@code .dialect(JdbcDialect.mysql())}: no MySQL server is
     * at hand, and MariaDB runs every statement of that dialect.
     */
    static RealDatabase mariadbAsMySql(int poolSize) {
        return new RealDatabase(MARIADB_URL, null, JdbcDialect.mysql(), poolSize, null, true, null, null);
    }

    /** An embedded in-memory H2 database of the suite's own, with a pool of {@code poolSize}. */
    static RealDatabase h2(int poolSize) {
        return new RealDatabase("embedded H2", "jdbc:h2:mem:" + java.util.UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                JdbcDialect.h2(), poolSize, null);
    }

    /** The same database with every connection at {@code isolation} (a {@code TRANSACTION_*} name of Connection). */
    RealDatabase at(String isolation) {
        return new RealDatabase(variable, fixedUrl, dialect, poolSize, isolation, forced, script, urlOptions);
    }

    /** The same database with tables made from another shipped script (on the class path) than the dialect's. */
    RealDatabase withScript(String location) {
        return new RealDatabase(variable, fixedUrl, dialect, poolSize, isolation, forced, location, urlOptions);
    }

    /**
     * The same database with tables made from the dialect's table script alone: on MariaDB, no claim procedure, so
     * that claims take the compound statement.
     */
    RealDatabase withoutClaimProcedure() {
        return withScript(dialect.schemaLocation());
    }

    /** The same database with driver options ({@code name=value&...}) appended to its URL. */
    RealDatabase withUrlOptions(String options) {
        return new RealDatabase(variable, fixedUrl, dialect, poolSize, isolation, forced, script, options);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String url = fixedUrl != null ? fixedUrl : System.getenv(variable);
        if (url == null || url.isBlank()) {
            throw new IllegalStateException(variable + " is not set");
        }
        if (urlOptions != null) {
            url = url + (url.contains("?") ? "&" : "?") + urlOptions;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(30_000);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName("idempotency-it-" + context.getRequiredTestClass().getSimpleName());
        if (isolation != null) {
            config.setTransactionIsolation(isolation);
        }
        pool = new HikariDataSource(config);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        dropTables();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        dropTables();
        if (pool != null) {
            if (fixedUrl != null) {
                new org.springframework.jdbc.core.JdbcTemplate(pool).execute("SHUTDOWN"); // an embedded H2
            }
            pool.close();
        }
    }

    DataSource dataSource() {
        if (pool == null) {
            throw new IllegalStateException("the database of " + variable + " is not open yet");
        }
        return pool;
    }

    JdbcDialect dialect() {
        return dialect;
    }

    /** Whether stores must be given {@link #dialect()} rather than detect it. */
    boolean forcesDialect() {
        return forced;
    }

    /** Makes {@code table} from this database's script ({@link #withScript}), or else the dialect's. */
    void createTable(String table) {
        if (script != null) {
            TestSchema.create(dataSource(), script, table);
        } else {
            TestSchema.create(dataSource(), dialect, table);
        }
    }

    /** A store on a new table of its own, dropped after the test. */
    IdempotencyStore newStore() {
        String table = TestSchema.uniqueTableName();
        createTable(table);
        tables.add(table);
        JdbcIdempotencyStore.Builder b = JdbcIdempotencyStore.builder(dataSource()).tableName(table);
        return (forced ? b.dialect(dialect) : b).build();
    }

    private void dropTables() {
        if (pool != null) {
            tables.forEach(t -> TestSchema.drop(pool, t));
        }
        tables.clear();
    }
}
