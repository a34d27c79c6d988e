package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.support.JdbcUtils;

/**
 * The SQL of one database for {@link JdbcIdempotencyStore}. The store picks one from the JDBC metadata's product
 * name ({@link #forProductName(String)}); {@link JdbcIdempotencyStore.Builder#dialect(JdbcDialect)} wins over that.
 *
 * <p>Built in: {@link #h2()}, {@link #postgresql()}, {@link #mysql()} and {@link #mariadb()}. Each ships its table as
 * a script on the classpath, {@link #schemaLocation()}, to copy into Flyway or Liquibase migrations. The class cannot
 * be extended outside this package: a new database gets a new store through the {@code IdempotencyStore} SPI and the
 * store TCK.
 */
public abstract class JdbcDialect {

    /** The placeholder for the table name in every statement of a dialect. */
    static final String TABLE = "{table}";

    /** The columns every read selects, in the order {@link JdbcIdempotencyStore} maps them. */
    static final String COLUMNS =
            "key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at, expires_at";

    JdbcDialect() {
    }

    /** H2 2.x (tests, samples, embedded programs). */
    public static JdbcDialect h2() {
        return H2Dialect.INSTANCE;
    }

    /** PostgreSQL 12 or later. */
    public static JdbcDialect postgresql() {
        return PostgresDialect.INSTANCE;
    }

    /**
     * MySQL 8 or later (InnoDB), and MariaDB 10.6 or later on a table made by {@code schema-mysql.sql}: each claim
     * sets the session's lock wait and puts it back around its insert, and reads a session variable to tell a
     * conflict.
     */
    public static JdbcDialect mysql() {
        return MySqlDialect.INSTANCE;
    }

    /**
     * MariaDB 10.6 or later (InnoDB), on a table made by {@code schema-mariadb.sql}: a claim of a new key is one
     * statement ({@code SET STATEMENT innodb_lock_wait_timeout = n FOR INSERT ... RETURNING ...}), otherwise as
     * {@link #mysql()}.
     */
    public static JdbcDialect mariadb() {
        return MariaDbDialect.INSTANCE;
    }

    /**
     * The dialect of a database, from {@link java.sql.DatabaseMetaData#getDatabaseProductName()}.
     *
     * @throws IllegalArgumentException if no built-in dialect supports that database
     */
    public static JdbcDialect forProductName(@Nullable String productName) {
        String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        if (name.startsWith("h2")) {
            return h2();
        }
        if (name.startsWith("postgresql")) {
            return postgresql();
        }
        if (name.startsWith("mariadb")) {
            return mariadb();
        }
        if (name.startsWith("mysql")) {
            return mysql();
        }
        throw new IllegalArgumentException("no idempotency JDBC dialect for database product '" + productName
                + "'; supported: H2, PostgreSQL, MySQL, MariaDB (set one with JdbcIdempotencyStore.builder(...)"
                + ".dialect(...), or implement IdempotencyStore for this database)");
    }

    /**
     * The dialect of the database behind {@code dataSource}, from its product name ({@link #forProductName}); the
     * store's own choice when none is configured. Borrows a connection once.
     *
     * @throws IllegalStateException if the product name cannot be read
     * @throws IllegalArgumentException if no built-in dialect supports that database
     */
    public static JdbcDialect of(DataSource dataSource) {
        return detect(dataSource, "JdbcDialect.of: cannot read the database product name to choose a dialect");
    }

    /** {@link #of}, failing with {@code failure} (the caller's words) when the product name cannot be read. */
    static JdbcDialect detect(DataSource dataSource, String failure) {
        String product;
        try {
            product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
        } catch (Exception e) {
            throw new IllegalStateException(failure, e);
        }
        return forProductName(product);
    }

    /** A short name: {@code h2}, {@code postgresql}, {@code mysql} or {@code mariadb}. */
    public abstract String name();

    /**
     * Where the table's script is on the classpath, e.g. {@code dev/idempotency/jdbc/schema-postgresql.sql}. It
     * creates the table under its default name, {@code idempotency_record}.
     */
    public final String schemaLocation() {
        return "dev/idempotency/jdbc/schema-" + name() + ".sql";
    }

    /**
     * Where the script of the resolutions' audit table ({@link JdbcIdempotencyAudit}) is on the classpath, e.g.
     * {@code dev/idempotency/jdbc/audit-postgresql.sql}. It creates the table under its default name,
     * {@code idempotency_record_audit}.
     */
    public final String auditSchemaLocation() {
        return "dev/idempotency/jdbc/audit-" + name() + ".sql";
    }

    /**
     * Where the script of this dialect's optional claim procedure is on the classpath, if it has one: MariaDB's
     * {@code dev/idempotency/jdbc/schema-mariadb-claim-procedure.sql}, for the table's default name. It is one
     * statement with semicolons in its body: run it whole, not split at them. With the procedure a claim in the
     * caller's transaction costs the server about half as much; without it the store works the same (docs/stores.md).
     */
    public Optional<String> claimProcedureLocation() {
        return Optional.empty();
    }

    /**
     * The statements that remove a table made by this dialect's scripts, with what they make beside it under a name
     * of its own: its audit table ({@code <table>_audit}, {@link #auditSchemaLocation()}), on PostgreSQL the table's
     * digest domain ({@code <table>_sha256}), on MariaDB its claim procedure ({@code <table>_claim_v1}). Each is {@code IF EXISTS}, in the order to run them (the table first: its columns
     * use the domain). For tests and tools that make a table per run and drop it afterwards; dropping the table alone
     * leaves the others behind.
     *
     * @param table the table's name as the store is given it ({@code name} or {@code schema.name})
     * @throws IllegalArgumentException if {@code table} is not a plain SQL identifier, optionally schema-qualified
     */
    public List<String> dropStatements(String table) {
        JdbcIdempotencyStore.checkIdentifier("table", table, true);
        List<String> drops = new ArrayList<>();
        drops.add("DROP TABLE IF EXISTS " + table);
        drops.add("DROP TABLE IF EXISTS " + table + "_audit");
        companionsToDrop(table, drops);
        return List.copyOf(drops);
    }

    /** Adds the statements that drop what the scripts make beside {@code table}, after the table's own. */
    void companionsToDrop(String table, List<String> drops) {
    }

    /**
     * What to tell the operator about a table that has the script's columns and primary key but lacks something
     * optional that makes it cheaper (MariaDB's claim procedure, PostgreSQL's digest domain), else null; logged at
     * INFO by {@link JdbcIdempotencyStore#verifySchema()}.
     */
    @Nullable String schemaAdvice(Connection con, String table) throws SQLException {
        return null;
    }

    @Override
    public String toString() {
        return "JdbcDialect[" + name() + "]";
    }

    // ---- what the store needs of a database; package-private on purpose -------------------------------------------

    /** Every statement, with {@link #TABLE} in place of the table name. */
    abstract Statements statements();

    /** The statements with the table name in place (validated by the store as a plain identifier). */
    final Statements statements(String table) {
        return statements().forTable(table);
    }

    /** How an instant is bound: as a UTC timestamp the column type stores exactly. */
    Object timestamp(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    /** Binds an instant compared with or stored in one of the store's own timestamp columns. */
    void bindInstant(java.sql.PreparedStatement ps, int index, Instant instant) throws SQLException {
        ps.setObject(index, timestamp(instant));
    }

    /** Reads a timestamp column written by {@link #timestamp(Instant)}; null stays null. */
    @Nullable Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    /**
     * Runs {@code work} with the database's lock wait bounded by {@code timeout} (at least one millisecond, or the
     * database's smallest unit), and the previous setting restored afterwards when the transaction goes on.
     *
     * @param inCallerTransaction whether {@code con} carries the caller's transaction (else a local one of the store)
     * @throws LockTimeout when the wait ran out (the statement that waited left no effect)
     * @throws SerializationConflict when the transaction's snapshot cannot see a row another transaction committed
     */
    abstract <T> T withLockTimeout(Connection con, boolean inCallerTransaction, Duration timeout, SqlWork<T> work)
            throws SQLException;

    /**
     * Inserts the claim bound by {@code binder} without raising a duplicate-key error into the caller's transaction.
     *
     * @return true if the row was inserted, false if a row with that key hash exists (committed)
     */
    abstract boolean insertClaim(Connection con, Statements sql, SqlBinder binder) throws SQLException;

    /**
     * How this database claims a key ({@link ClaimStrategy}): the store calls it for every {@code claim} and
     * {@code takeOver}, and for {@code markNeedsReviewIfStale}.
     */
    abstract ClaimStrategy claimStrategy();

    /** Binds the claim's eight parameters (those of {@link Statements#insert()}) from {@code first} on. */
    final void bindClaim(java.sql.PreparedStatement ps, int first, dev.idempotency.store.ClaimRequest r)
            throws SQLException {
        ps.setBytes(first, r.keyHash());
        ps.setString(first + 1, r.operation());
        ps.setString(first + 2, r.key());
        ps.setBytes(first + 3, r.fingerprint());
        ps.setString(first + 4, r.tier().name());
        bindClaimInstant(ps, first + 5, r.leaseUntil());
        bindClaimInstant(ps, first + 6, r.now());
        bindClaimInstant(ps, first + 7, r.expiresAt());
    }

    /** Binds an instant of the claim's {@link Statements#insert()}: as {@link #bindInstant} unless a dialect says. */
    void bindClaimInstant(java.sql.PreparedStatement ps, int index, Instant instant) throws SQLException {
        bindInstant(ps, index, instant);
    }

    /** What a failure of a statement did to the transaction it ran in. */
    enum Failure {
        /** The statement's lock wait ran out; the statement alone was rolled back, unless the server says otherwise. */
        LOCK_TIMEOUT,
        /**
         * The transaction cannot go on: the database rolled it back whole (a deadlock victim) or its snapshot can
         * never see the row it met (a serialization failure).
         */
        ABORTED,
        /** Anything else. */
        OTHER
    }

    /** What {@code e} did to the transaction of the statement that failed. */
    abstract Failure classify(SQLException e);

    /**
     * {@code e} as the store tells it apart: a {@link LockTimeout}, a {@link SerializationConflict} (the transaction
     * cannot go on), or itself.
     */
    final SQLException asConflict(SQLException e) {
        switch (classify(e)) {
            case LOCK_TIMEOUT -> throw new LockTimeout(e);
            case ABORTED -> throw new SerializationConflict(e);
            default -> {
                return e;
            }
        }
    }

    /**
     * Whether a {@link Failure#LOCK_TIMEOUT} rolls back the whole transaction on this server, not only the statement
     * (InnoDB with {@code innodb_rollback_on_timeout=ON}). The store asks once and remembers.
     */
    boolean rollsBackTransactionOnLockTimeout(Connection con) throws SQLException {
        return false;
    }

    /** How a null timestamp is bound (where a statement compares a nullable timestamp null-safely). */
    int nullTimestampType() {
        return java.sql.Types.TIMESTAMP_WITH_TIMEZONE;
    }

    // ---- shared pieces ----------------------------------------------------------------------------------------------

    /** A piece of JDBC work. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run() throws SQLException;
    }

    /** Puts a session setting back. */
    @FunctionalInterface
    interface SqlAction {
        void run() throws SQLException;
    }

    /**
     * Runs {@code work}, then {@code restore}, whether the work failed or not. A failing restore never replaces the
     * work's own failure (a lock timeout must stay a lock timeout): it is attached to it as suppressed. When the work
     * succeeded, the restore's failure is thrown.
     */
    static <T> T thenRestore(SqlWork<T> work, SqlAction restore) throws SQLException {
        T result;
        try {
            result = work.run();
        } catch (Throwable primary) {
            try {
                restore.run();
            } catch (SQLException | RuntimeException restoreFailure) {
                primary.addSuppressed(restoreFailure);
            }
            throw primary;
        }
        restore.run();
        return result;
    }

    /** Binds the parameters of a prepared statement. */
    @FunctionalInterface
    interface SqlBinder {
        void bind(java.sql.PreparedStatement ps) throws SQLException;
    }

    /** The lock wait ran out. */
    static final class LockTimeout extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LockTimeout(SQLException cause) {
            super(cause.getMessage(), cause, true, false);
        }
    }

    /** A snapshot-isolated transaction met a row committed after its snapshot. */
    static final class SerializationConflict extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SerializationConflict(SQLException cause) {
            super(cause.getMessage(), cause, true, false);
        }
    }

    /**
     * "00" to "99": the pieces of the timestamp texts that the dialects concatenate (a concatenation writes its
     * string's bytes once, in place, where bytes written first would be copied into the string).
     */
    static final String[] TWO_DIGITS = new String[100];

    static {
        for (int i = 0; i < 100; i++) {
            TWO_DIGITS[i] = (i < 10 ? "0" : "") + i;
        }
    }

    /** Milliseconds of a timeout, at least one: zero means "wait forever" to several databases. */
    static long atLeastOneMilli(Duration timeout) {
        return Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    }

    /** Whole seconds of a timeout, rounded up, at least one (InnoDB's unit). */
    static long atLeastOneSecond(Duration timeout) {
        long seconds = timeout.getSeconds() + (timeout.getNano() > 0 ? 1 : 0);
        return Math.max(1, Math.min(1_073_741_824L, seconds));
    }
}
