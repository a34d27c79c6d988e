package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcDialect.LockTimeout;
import dev.idempotency.jdbc.JdbcDialect.SerializationConflict;
import dev.idempotency.jdbc.JdbcDialect.SqlBinder;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * An {@link IdempotencyStore} on one table of a relational database: H2, PostgreSQL, MySQL or MariaDB.
 *
 * <pre>{@code
 * IdempotencyStore store = JdbcIdempotencyStore.builder(dataSource)
 *     .tableName("idempotency_record")   // the default
 *     .build();                          // the dialect comes from the JDBC metadata unless set with .dialect(...)
 * }</pre>
 *
 * <p>The table is created by the script of the dialect ({@link JdbcDialect#schemaLocation()}); the store never
 * creates or alters it.
 *
 * <p><b>Transactions.</b> The store joins the caller's transaction: it takes its connection with Spring's
 * {@link DataSourceUtils#getConnection(DataSource)}, so when a Spring-managed transaction is active on the same
 * {@code DataSource} the claim and the result are written in it and commit or roll back with the caller's own writes
 * ({@link ClaimResult#acquired(boolean) acquired(true)}). A concurrent duplicate then waits on the uncommitted row
 * for at most {@link ClaimRequest#lockTimeout()} and sees the committed outcome, or acquires the key if that
 * transaction rolled back; past the timeout it answers {@link ClaimResult#lockTimeout()}, leaving the caller's
 * transaction usable (a savepoint on PostgreSQL). Without a transaction every method commits on its own, and a claim
 * is committed at once as {@code IN_FLIGHT} with its lease ({@code acquired(false)}).
 *
 * <p>When the caller's transaction runs under snapshot isolation (REPEATABLE READ or SERIALIZABLE on PostgreSQL) and
 * the key was committed by another transaction after the snapshot was taken, this transaction can never read that
 * outcome: {@link #claim} then throws {@link IdempotencyInProgressException}, telling the caller to retry in a new
 * transaction (which replays). The same holds for an InnoDB deadlock.
 *
 * <p>Other database failures are thrown as Spring {@link DataAccessException}s. Thread-safe; share one instance.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

    /** The table name used unless {@link Builder#tableName(String)} says otherwise. */
    public static final String DEFAULT_TABLE_NAME = "idempotency_record";

    private static final System.Logger LOG = System.getLogger(JdbcIdempotencyStore.class.getName());
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final int CONFLICT_ATTEMPTS = 10;
    private static final int LOCAL_RETRIES = 3;

    private final DataSource dataSource;
    private final String tableName;
    private final @Nullable JdbcDialect configuredDialect;
    private final SQLExceptionTranslator translator;
    private volatile @Nullable Resolved resolved;

    /** The dialect and its statements, found on first use (so that building the store needs no connection). */
    private record Resolved(JdbcDialect dialect, Statements sql) {
    }

    private JdbcIdempotencyStore(Builder b) {
        this.dataSource = b.dataSource;
        this.tableName = b.tableName;
        this.configuredDialect = b.dialect;
        this.translator = new SQLErrorCodeSQLExceptionTranslator(b.dataSource);
        if (b.dialect != null) {
            this.resolved = new Resolved(b.dialect, b.dialect.statements(b.tableName));
        }
    }

    /** Starts a store on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The table this store uses. */
    public String tableName() {
        return tableName;
    }

    /** The dialect in use: the configured one, or the one the JDBC metadata names (this may connect once). */
    public JdbcDialect dialect() {
        return resolve().dialect();
    }

    /**
     * Checks, once, that the table exists and has every column and the primary key of the script this dialect ships
     * ({@link JdbcDialect#schemaLocation()}), so that a missing or outdated table fails an application at startup
     * rather than its first call. The Spring integration calls it when the application context starts. It opens one
     * connection of its own, outside any transaction.
     *
     * @throws IllegalStateException naming the table, what is missing, and the script that creates it
     */
    public void verifySchema() {
        SchemaVerifier.verify(dataSource, tableName, dialect());
    }

    private Resolved resolve() {
        Resolved r = resolved;
        if (r == null) {
            synchronized (this) {
                r = resolved;
                if (r == null) {
                    JdbcDialect dialect = configuredDialect != null ? configuredDialect : detect();
                    r = new Resolved(dialect, dialect.statements(tableName));
                    resolved = r;
                }
            }
        }
        return r;
    }

    private JdbcDialect detect() {
        String product;
        try {
            product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
        } catch (Exception e) {
            throw new IllegalStateException("JdbcIdempotencyStore: cannot read the database product name to choose "
                    + "a dialect; set one with JdbcIdempotencyStore.builder(...).dialect(...)", e);
        }
        return JdbcDialect.forProductName(product);
    }

    // ---- the SPI -------------------------------------------------------------------------------------------------

    @Override
    public ClaimResult claim(ClaimRequest request) {
        Objects.requireNonNull(request, "request");
        return claimOrTakeOver("claim", request, null);
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(observed, "observed");
        return claimOrTakeOver("takeOver", request, observed);
    }

    private ClaimResult claimOrTakeOver(String task, ClaimRequest r, @Nullable IdempotencyRecord observed) {
        Resolved rs = resolve();
        JdbcDialect dialect = rs.dialect();
        try {
            return execute(task, true, (con, inTransaction) ->
                    dialect.withLockTimeout(con, inTransaction, r.lockTimeout(), () -> {
                        if (observed != null && replace(con, rs.sql(), r, observed)) {
                            return ClaimResult.acquired(inTransaction);
                        }
                        return insertOrRead(con, rs, r, inTransaction);
                    }));
        } catch (LockTimeout e) {
            logRestoreFailures(task, e);
            return ClaimResult.lockTimeout();
        } catch (SerializationConflict e) {
            IdempotencyInProgressException busy = new IdempotencyInProgressException(r.operation(), r.key(),
                    "idempotency key '" + r.key() + "' of operation " + r.operation() + " was written by a "
                    + "concurrent transaction that this transaction cannot see (it committed after this "
                    + "transaction's snapshot under REPEATABLE READ or SERIALIZABLE isolation, or the database chose "
                    + "this transaction as a deadlock victim); retry the call in a new transaction to get its outcome",
                    e.getCause());
            for (Throwable restoreFailure : e.getSuppressed()) {
                busy.addSuppressed(restoreFailure);
            }
            throw busy;
        }
    }

    /** A lock timeout is an answer, not a failure; a session setting that could not be put back is still told. */
    private void logRestoreFailures(String task, LockTimeout e) {
        for (Throwable t : new Throwable[] {e, e.getCause()}) {
            for (Throwable restoreFailure : t == null ? new Throwable[0] : t.getSuppressed()) {
                LOG.log(System.Logger.Level.WARNING, "JdbcIdempotencyStore." + task + " on table " + tableName
                        + ": after a lock timeout, a session setting could not be put back", restoreFailure);
            }
        }
    }

    /** Inserts the claim, or reads the row that holds the key; retried while a conflicting row vanishes. */
    private ClaimResult insertOrRead(Connection con, Resolved rs, ClaimRequest r, boolean inTransaction)
            throws SQLException {
        for (int attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
            if (rs.dialect().insertClaim(con, rs.sql(), ps -> bindClaim(ps, r))) {
                return ClaimResult.acquired(inTransaction);
            }
            Optional<IdempotencyRecord> holder = query(con, rs.sql().selectLatest(), r.keyHash());
            if (holder.isPresent()) {
                return ClaimResult.existing(holder.get());
            }
            // the row that made the insert conflict was deleted (released, resolved or purged) before it was read
        }
        throw new IllegalStateException("JdbcIdempotencyStore.claim: the row of " + r + " conflicted and vanished "
                + CONFLICT_ATTEMPTS + " times in a row; is the table '" + tableName + "' under a purge storm?");
    }

    private void bindClaim(PreparedStatement ps, ClaimRequest r) throws SQLException {
        JdbcDialect d = resolve().dialect();
        ps.setBytes(1, r.keyHash());
        ps.setString(2, r.operation());
        ps.setString(3, r.key());
        ps.setBytes(4, r.fingerprint());
        ps.setString(5, r.tier().name());
        ps.setObject(6, d.timestamp(r.leaseUntil()));
        ps.setObject(7, d.timestamp(r.now()));
        ps.setObject(8, d.timestamp(r.expiresAt()));
    }

    /** Replaces the observed row with the new claim if it is still in the observed state. */
    private boolean replace(Connection con, Statements sql, ClaimRequest r, IdempotencyRecord observed)
            throws SQLException {
        JdbcDialect d = resolve().dialect();
        Instant lease = observed.leaseUntil();
        return update(con, lease == null ? sql.takeOverUnleased() : sql.takeOverLeased(), ps -> {
            ps.setString(1, r.operation());
            ps.setString(2, r.key());
            ps.setBytes(3, r.fingerprint());
            ps.setString(4, r.tier().name());
            ps.setObject(5, d.timestamp(r.leaseUntil()));
            ps.setObject(6, d.timestamp(r.now()));
            ps.setObject(7, d.timestamp(r.expiresAt()));
            ps.setBytes(8, r.keyHash());
            ps.setString(9, observed.status().name());
            if (lease == null) {
                ps.setObject(10, d.timestamp(observed.expiresAt()));
            } else {
                ps.setObject(10, d.timestamp(lease));
                ps.setObject(11, d.timestamp(observed.expiresAt()));
            }
        }) == 1;
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Resolved rs = resolve();
        return execute("complete", false, (con, tx) -> update(con, rs.sql().complete(), ps -> {
            ps.setBytes(1, result);
            ps.setObject(2, rs.dialect().timestamp(expiresAt));
            ps.setBytes(3, keyHash);
            ps.setObject(4, rs.dialect().timestamp(leaseUntil));
        }) == 1);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        return ifClaim("release", resolve().sql().release(), keyHash, leaseUntil);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return ifClaim("markNeedsReview", resolve().sql().markNeedsReview(), keyHash, leaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        // TODO(database clock): confirm the lease's end against the database's clock in the statement
        return !leaseUntil.isAfter(now) && markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(newLeaseUntil, "newLeaseUntil");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        return execute("renew", false, (con, tx) -> update(con, rs.sql().renew(), ps -> {
            ps.setObject(1, d.timestamp(newLeaseUntil));
            ps.setBytes(2, keyHash);
            ps.setObject(3, d.timestamp(leaseUntil));
        }) == 1);
    }

    private boolean ifClaim(String task, String statement, byte[] keyHash, Instant leaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        JdbcDialect d = resolve().dialect();
        return execute(task, false, (con, tx) -> update(con, statement, ps -> {
            ps.setBytes(1, keyHash);
            ps.setObject(2, d.timestamp(leaseUntil));
        }) == 1);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        Objects.requireNonNull(keyHash, "keyHash");
        Resolved rs = resolve();
        return execute("find", false, (con, tx) -> query(con, rs.sql().select(), keyHash));
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        Objects.requireNonNull(observed, "observed");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        // conditional on the observed state, as takeOver is: a claim taken over or completed meanwhile is kept
        return execute("resolve", false, (con, tx) -> result == null
                ? update(con, rs.sql().resolveDelete(), ps -> bindObserved(ps, 1, d, observed)) == 1
                : update(con, rs.sql().resolveWithResult(), ps -> {
                    ps.setBytes(1, result);
                    ps.setObject(2, d.timestamp(expiresAt));
                    bindObserved(ps, 3, d, observed);
                }) == 1);
    }

    /** Binds key_hash, status, lease_until (possibly null) and expires_at of an observed record from {@code first}. */
    private static void bindObserved(PreparedStatement ps, int first, JdbcDialect d, IdempotencyRecord observed)
            throws SQLException {
        ps.setBytes(first, observed.keyHash());
        ps.setString(first + 1, observed.status().name());
        Instant lease = observed.leaseUntil();
        if (lease == null) {
            ps.setNull(first + 2, d.nullTimestampType());
        } else {
            ps.setObject(first + 2, d.timestamp(lease));
        }
        ps.setObject(first + 3, d.timestamp(observed.expiresAt()));
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        Objects.requireNonNull(now, "now");
        if (batchSize <= 0) {
            throw new IllegalArgumentException("JdbcIdempotencyStore.purgeExpired: batchSize must be positive, was "
                    + batchSize);
        }
        Resolved rs = resolve();
        return execute("purgeExpired", false, (con, tx) -> update(con, rs.sql().purge(), ps -> {
            ps.setObject(1, rs.dialect().timestamp(now));
            ps.setInt(2, batchSize);
        }));
    }

    // ---- JDBC plumbing ------------------------------------------------------------------------------------------

    /** Work on a connection that either carries the caller's transaction or is the store's own. */
    @FunctionalInterface
    private interface ConnectionWork<T> {
        T run(Connection con, boolean inCallerTransaction) throws SQLException;
    }

    /**
     * Runs {@code work} on the caller's transactional connection when there is one; otherwise on a connection of the
     * pool, in a local transaction committed before returning when {@code atomic} (several statements) or when the
     * connection does not auto-commit. Deadlocks and serialization failures of a local transaction are retried: the
     * database rolled it back whole.
     */
    private <T> T execute(String task, boolean atomic, ConnectionWork<T> work) {
        Connection con = DataSourceUtils.getConnection(dataSource);
        try {
            // a connection bound by mere transaction synchronization (no transaction) still auto-commits
            if (DataSourceUtils.isConnectionTransactional(con, dataSource) && !con.getAutoCommit()) {
                return work.run(con, true);
            }
            for (int attempt = 1; ; attempt++) {
                try {
                    return local(con, atomic, work);
                } catch (SerializationConflict e) {
                    if (attempt >= LOCAL_RETRIES) {
                        throw e;
                    }
                } catch (SQLException e) {
                    if (attempt >= LOCAL_RETRIES || !isTransient(e)) {
                        throw e;
                    }
                }
            }
        } catch (SQLException e) {
            DataAccessException translated = translator.translate("JdbcIdempotencyStore." + task + " on table "
                    + tableName, null, e);
            throw translated != null ? translated : new UncategorizedSQLException(task, null, e);
        } finally {
            DataSourceUtils.releaseConnection(con, dataSource);
        }
    }

    private static <T> T local(Connection con, boolean atomic, ConnectionWork<T> work) throws SQLException {
        boolean autoCommit = con.getAutoCommit();
        if (autoCommit && !atomic) {
            return work.run(con, false);
        }
        if (!autoCommit) {
            return inLocalTransaction(con, work);
        }
        con.setAutoCommit(false);
        // putting auto-commit back must not replace the work's own failure (a lock timeout, a conflict)
        return JdbcDialect.thenRestore(() -> inLocalTransaction(con, work), () -> con.setAutoCommit(true));
    }

    private static <T> T inLocalTransaction(Connection con, ConnectionWork<T> work) throws SQLException {
        try {
            T result = work.run(con, false);
            con.commit();
            return result;
        } catch (SQLException | RuntimeException | Error e) {
            try {
                con.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static boolean isTransient(SQLException e) {
        return "40001".equals(e.getSQLState()) || "40P01".equals(e.getSQLState()) || MySqlDialect.isDeadlock(e);
    }

    private static int update(Connection con, String sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            binder.bind(ps);
            return ps.executeUpdate();
        }
    }

    private Optional<IdempotencyRecord> query(Connection con, String sql, byte[] keyHash) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            ps.setBytes(1, keyHash);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(map(rs)) : Optional.empty();
            }
        }
    }

    private IdempotencyRecord map(ResultSet rs) throws SQLException {
        JdbcDialect d = resolve().dialect();
        return new IdempotencyRecord(
                rs.getBytes(1),
                rs.getString(2),
                rs.getString(3),
                rs.getBytes(4),
                Tier.valueOf(rs.getString(5)),
                IdempotencyRecord.Status.valueOf(rs.getString(6)),
                rs.getBytes(7),
                d.instant(rs, 8),
                d.instant(rs, 9),
                d.instant(rs, 10));
    }

    @Override
    public String toString() {
        Resolved r = resolved;
        return "JdbcIdempotencyStore[" + tableName + (r != null ? ", " + r.dialect().name() : "") + "]";
    }

    /** Builds a {@link JdbcIdempotencyStore}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String tableName = DEFAULT_TABLE_NAME;
        private @Nullable JdbcDialect dialect;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The table, created by the dialect's script with this name in place of {@code idempotency_record}: a plain
         * SQL identifier ({@code [A-Za-z_][A-Za-z0-9_]*}, at most 63 characters), optionally qualified by a schema
         * ({@code schema.table}). Unquoted, so the database's case rules for identifiers apply.
         *
         * @throws IllegalArgumentException if it is not a plain identifier
         */
        public Builder tableName(String tableName) {
            Objects.requireNonNull(tableName, "tableName");
            String[] parts = tableName.split("\\.", -1);
            boolean valid = parts.length <= 2;
            for (String part : parts) {
                valid &= IDENTIFIER.matcher(part).matches();
            }
            if (!valid) {
                throw new IllegalArgumentException("JdbcIdempotencyStore.Builder.tableName: '" + tableName
                        + "' is not a plain SQL identifier (letters, digits and '_', not starting with a digit, at "
                        + "most 63 characters, optionally 'schema.table')");
            }
            this.tableName = tableName;
            return this;
        }

        /** The database's dialect; without it the store reads the product name from the JDBC metadata. */
        public Builder dialect(JdbcDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        public JdbcIdempotencyStore build() {
            return new JdbcIdempotencyStore(this);
        }
    }
}
