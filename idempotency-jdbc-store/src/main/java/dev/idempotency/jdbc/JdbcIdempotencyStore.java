package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcDialect.LockTimeout;
import dev.idempotency.jdbc.JdbcDialect.SerializationConflict;
import dev.idempotency.jdbc.JdbcDialect.SqlBinder;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.datasource.DataSourceUtils;
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
 * <p><b>A duplicate never holds a lock its owner needs.</b> On MySQL/MariaDB a write that meets a row keeps its lock
 * until the transaction ends, so inside the caller's transaction the store reads the key with a plain read first and
 * answers a committed row without writing ({@link #claim} answers it as existing; {@link #takeOver} and
 * {@link #markNeedsReviewIfStale} write only once a plain read shows the row over by the database's clock). An owner
 * running without a transaction can then always record its outcome while duplicates wait; a duplicate whose insert
 * still meets a committed in-flight claim throws {@link IdempotencyInProgressException} at once. PostgreSQL and H2 lock
 * no committed row that a duplicate only meets.
 *
 * <p><b>A transaction that cannot go on.</b> When, inside the caller's transaction, the database picks it as a
 * deadlock victim (InnoDB 1213, PostgreSQL 40P01, H2), rolls it back whole on a lock wait timeout (InnoDB with
 * {@code innodb_rollback_on_timeout=ON}, read once per store), or finds that its snapshot can never see the key's row
 * (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE: the key was committed after the snapshot was taken), every
 * method throws a Spring {@link org.springframework.dao.PessimisticLockingFailureException} that implements
 * {@link dev.idempotency.store.CallerTransactionAborted}, naming the key and saying that the whole transaction must be
 * retried (its retry replays the outcome). The executor then marks the transaction rollback-only and passes the
 * exception on, so that a {@code @Retryable} on {@code TransientDataAccessException} retries the transaction. Without
 * a caller's transaction the store retries its own short transaction (three attempts), since only its own work was
 * rolled back, and a claim that fails every attempt throws {@link IdempotencyInProgressException}.
 *
 * <p><b>The database's clock.</b> Every decision that depends on time is confirmed by the database's clock inside
 * the conditional statement, whatever the instants the executor passes: {@link #takeOver} replaces only an
 * {@code IN_FLIGHT} claim whose lease has ended, or a {@code COMPLETED} outcome past its expiry, by that clock;
 * {@link #markNeedsReviewIfStale} marks only a claim whose lease has ended by it; {@link #purgeExpired} deletes only
 * what expired by it as well as by the {@code now} given. A node whose clock runs ahead never takes over a live claim
 * or purges a live outcome. The clock is PostgreSQL's {@code clock_timestamp()} (the time of the statement, not of
 * the transaction's start), MySQL/MariaDB's {@code UTC_TIMESTAMP(3)} and H2's {@code CURRENT_TIMESTAMP(3)} (H2 gives
 * the start of the transaction: inside a long caller's transaction it decides late, never early).
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
    /** Maps a row ({@link #map}), made once rather than per claim. */
    private final JdbcDialect.RowReader reader = this::map;
    /** Whether the server rolls back a whole transaction on a lock wait timeout; read on the first one. */
    private volatile @Nullable Boolean rollbackOnTimeout;

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

    /** The data source the store connects through (its audit's too: {@link JdbcIdempotencyAudit#of}). */
    DataSource dataSource() {
        return dataSource;
    }

    /** The dialect in use: the configured one, or the one the JDBC metadata names (this may connect once). */
    public JdbcDialect dialect() {
        return resolve().dialect();
    }

    /**
     * Checks, once, that the table exists and has every column and the primary key of the script this dialect ships
     * ({@link JdbcDialect#schemaLocation()}), so that a missing or outdated table fails an application at startup
     * rather than its first call. The Spring integration calls it when the application context starts. It opens one
     * connection of its own, outside any transaction. It then says at level INFO what would make the table cheaper to
     * use: on MariaDB, when the table's optional claim procedure ({@link JdbcDialect#claimProcedureLocation()}) is not
     * there; on PostgreSQL, when the table keeps its digests as plain {@code BYTEA}, with CHECK constraints (a table
     * made by an earlier script: {@code migrate-postgresql-sha256-domain.sql} migrates it).
     *
     * @throws IllegalStateException naming the table, what is missing, and the script that creates it
     */
    public void verifySchema() {
        String advice = SchemaVerifier.verify(dataSource, tableName, dialect());
        if (advice != null) {
            LOG.log(System.Logger.Level.INFO, advice);
        }
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
        return JdbcDialect.detect(dataSource, "JdbcIdempotencyStore: cannot read the database product name to choose "
                + "a dialect; set one with JdbcIdempotencyStore.builder(...).dialect(...)");
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
            if (observed == null && dialect.claimsAtOnce()) {
                // a single statement commits on its own without the caller's transaction: no local one around it
                return execute(task, r, !dialect.claimAtOnceIsOneStatement(), (con, inTransaction) ->
                        claimAtOnce(con, rs, r, inTransaction));
            }
            return execute(task, r, true, (con, inTransaction) ->
                    dialect.withLockTimeout(con, inTransaction, r.lockTimeout(), () -> {
                        // MySQL/MariaDB in the caller's transaction: read before writing, see locksRowsItMeets
                        boolean readFirst = inTransaction && dialect.locksRowsItMeets();
                        if (observed != null) {
                            if (readFirst) {
                                Optional<IdempotencyRecord> seen = query(con, rs.sql().select(), r.keyHash());
                                if (seen.isPresent()) {
                                    return replaceIfOver(con, rs, r, observed, seen.get());
                                }
                            } else if (replace(con, rs.sql(), r, observed)) {
                                return ClaimResult.acquired(inTransaction);
                            }
                        }
                        return insertOrRead(con, rs, r, inTransaction, readFirst);
                    }));
        } catch (LockTimeout e) {
            logRestoreFailures(task, e);
            return ClaimResult.lockTimeout();
        } catch (SerializationConflict e) {
            // the store's own short transaction failed every attempt (in the caller's, execute threw the abort)
            IdempotencyInProgressException busy = new IdempotencyInProgressException(r.operation(), r.key(),
                    "idempotency key '" + r.key() + "' of operation " + r.operation() + " met concurrent writers "
                    + "that made the database roll back " + LOCAL_RETRIES + " attempts in a row (deadlocks or "
                    + "serialization failures); retry the call to get its outcome", e.getCause());
            for (Throwable restoreFailure : e.getSuppressed()) {
                busy.addSuppressed(restoreFailure);
            }
            throw busy;
        }
    }

    private static String describe(ClaimRequest r) {
        return "idempotency key '" + r.key() + "' of operation " + r.operation();
    }

    private static String describe(byte[] keyHash) {
        return "idempotency key hash " + HexFormat.of().formatHex(keyHash);
    }

    /**
     * What a failure names, made only when one is thrown: a claim's key, a key hash, or the text given. (A subject is
     * passed as it is, not as a lambda that describes it, which would cost an object on every call.)
     */
    private static String subjectText(Object subject) {
        return subject instanceof ClaimRequest r ? describe(r)
                : subject instanceof byte[] keyHash ? describe(keyHash) : String.valueOf(subject);
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

    /**
     * Inserts the claim, or reads the row that holds the key; retried while a conflicting row vanishes.
     *
     * @param readFirst whether to read the key with a plain read before the insert, and answer a row it shows without
     *                  writing: in the caller's transaction on a database whose insert would lock it
     *                  ({@link JdbcDialect#locksRowsItMeets()})
     */
    private ClaimResult insertOrRead(Connection con, Resolved rs, ClaimRequest r, boolean inTransaction,
            boolean readFirst) throws SQLException {
        if (readFirst) {
            Optional<IdempotencyRecord> committed = query(con, rs.sql().select(), r.keyHash());
            if (committed.isPresent()) {
                // committed (or this transaction's own): no lock taken, so its owner can record its outcome
                return ClaimResult.existing(committed.get());
            }
        }
        for (int attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
            if (rs.dialect().insertClaim(con, rs.sql(), ps -> rs.dialect().bindClaim(ps, 1, r))) {
                return ClaimResult.acquired(inTransaction);
            }
            Optional<IdempotencyRecord> holder = query(con, rs.sql().selectLatest(), r.keyHash());
            if (holder.isPresent()) {
                if (readFirst && holder.get().status() == IdempotencyRecord.Status.IN_FLIGHT) {
                    // committed in flight after the plain read (or this transaction's snapshot): the insert now
                    // holds its row lock until this transaction ends, which the owner needs to record its outcome
                    throw committedInFlightMeanwhile(r);
                }
                return ClaimResult.existing(holder.get());
            }
            // the row that made the insert conflict was deleted (released, resolved or purged) before it was read
        }
        throw vanished(r);
    }

    /**
     * A claim in one round trip per attempt ({@link JdbcDialect#claimsAtOnce()}); retried while a conflicting row
     * vanishes before it is read.
     */
    private ClaimResult claimAtOnce(Connection con, Resolved rs, ClaimRequest r, boolean inTransaction)
            throws SQLException {
        // MariaDB in the caller's transaction: read before writing, see locksRowsItMeets (in the claim's own round
        // trip when the dialect can)
        boolean readFirst = inTransaction && rs.dialect().locksRowsItMeets();
        if (readFirst && !rs.dialect().claimAtOnceReadsFirst()) {
            Optional<IdempotencyRecord> committed = query(con, rs.sql().select(), r.keyHash());
            if (committed.isPresent()) {
                // committed (or this transaction's own): no lock taken, so its owner can record its outcome
                return ClaimResult.existing(committed.get());
            }
        }
        for (int attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
            JdbcDialect.ClaimAttempt a = rs.dialect().claimAtOnce(con, inTransaction, rs.sql(), r, reader);
            if (a.inserted()) {
                return ClaimResult.acquired(inTransaction);
            }
            IdempotencyRecord holder = a.holderRead() ? a.holder()
                    : query(con, rs.sql().selectLatest(), r.keyHash()).orElse(null);
            if (holder != null) {
                if (readFirst && !a.plainRead() && holder.status() == IdempotencyRecord.Status.IN_FLIGHT) {
                    // committed in flight after the plain read (or this transaction's snapshot): the insert now
                    // holds its row lock until this transaction ends, which the owner needs to record its outcome
                    throw committedInFlightMeanwhile(r);
                }
                // a plain read's row (no lock taken, so its owner can record its outcome), or one the insert met
                return ClaimResult.existing(holder);
            }
        }
        throw vanished(r);
    }

    private IllegalStateException vanished(ClaimRequest r) {
        return new IllegalStateException("JdbcIdempotencyStore.claim: the row of " + r + " conflicted and vanished "
                + CONFLICT_ATTEMPTS + " times in a row; is the table '" + tableName + "' under a purge storm?");
    }

    /**
     * A takeover in the caller's transaction on a database that locks the rows its writes meet: {@code seen}, the key's
     * row by a plain read, is replaced only if it is still in the observed state and over by the database's clock (a
     * plain read too). Otherwise it is answered as is, without a lock on a claim that may be live.
     */
    private ClaimResult replaceIfOver(Connection con, Resolved rs, ClaimRequest r, IdempotencyRecord observed,
            IdempotencyRecord seen) throws SQLException {
        if (!exists(con, rs.sql().selectIfOver(), ps -> bindObserved(ps, 1, rs.dialect(), observed))) {
            return ClaimResult.existing(seen);
        }
        if (replace(con, rs.sql(), r, observed)) {
            return ClaimResult.acquired(true);
        }
        // the row changed since the plain read (this transaction's snapshot): the update met its latest version and
        // keeps a lock on it until this transaction ends; give up now rather than wait holding it
        throw committedInFlightMeanwhile(r);
    }

    private static IdempotencyInProgressException committedInFlightMeanwhile(ClaimRequest r) {
        return new IdempotencyInProgressException(r.operation(), r.key(), "another attempt with idempotency key '"
                + r.key() + "' of operation " + r.operation() + " committed its claim after this transaction read "
                + "the key (or took its snapshot); rather than wait holding a row lock that attempt needs to record "
                + "its outcome, this call gives up at once: retry it, in a new transaction, to get its outcome", null);
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
            d.bindInstant(ps, 5, r.leaseUntil());
            d.bindInstant(ps, 6, r.now());
            d.bindInstant(ps, 7, r.expiresAt());
            ps.setBytes(8, r.keyHash());
            ps.setString(9, observed.status().name());
            if (lease == null) {
                d.bindInstant(ps, 10, observed.expiresAt());
            } else {
                d.bindInstant(ps, 10, lease);
                d.bindInstant(ps, 11, observed.expiresAt());
            }
        }) == 1;
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(expiresAt, "expiresAt");
        return execute("complete", keyHash, false, new Completion(resolve(), keyHash, leaseUntil, result, expiresAt));
    }

    /** A completion's work and its statement's binder: one object per call, the commonest write after the claim. */
    private record Completion(Resolved rs, byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt)
            implements ConnectionWork<Boolean>, SqlBinder {

        @Override
        public Boolean run(Connection con, boolean inCallerTransaction) throws SQLException {
            return update(con, rs.sql().complete(), this) == 1;
        }

        @Override
        public void bind(PreparedStatement ps) throws SQLException {
            ps.setBytes(1, result);
            rs.dialect().bindInstant(ps, 2, expiresAt);
            ps.setBytes(3, keyHash);
            rs.dialect().bindInstant(ps, 4, leaseUntil);
        }
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
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(now, "now");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        SqlBinder claim = ps -> {
            ps.setBytes(1, keyHash);
            d.bindInstant(ps, 2, leaseUntil);
        };
        // the database's clock decides, inside the statement: the caller's now may run ahead of the lease's owner
        return execute("markNeedsReviewIfStale", keyHash, false, (con, inTransaction) -> {
            if (inTransaction && d.locksRowsItMeets() && !exists(con, rs.sql().selectIfStale(), claim)) {
                // a live claim (or another row): no write, so no lock on a row its owner needs to complete
                return false;
            }
            return update(con, rs.sql().markNeedsReviewIfStale(), claim) == 1;
        });
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(newLeaseUntil, "newLeaseUntil");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        return execute("renew", keyHash, false, (con, tx) -> update(con, rs.sql().renew(), ps -> {
            d.bindInstant(ps, 1, newLeaseUntil);
            ps.setBytes(2, keyHash);
            d.bindInstant(ps, 3, leaseUntil);
        }) == 1);
    }

    private boolean ifClaim(String task, String statement, byte[] keyHash, Instant leaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        JdbcDialect d = resolve().dialect();
        return execute(task, keyHash, false, (con, tx) -> update(con, statement, ps -> {
            ps.setBytes(1, keyHash);
            d.bindInstant(ps, 2, leaseUntil);
        }) == 1);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        Objects.requireNonNull(keyHash, "keyHash");
        Resolved rs = resolve();
        return execute("find", keyHash, false, (con, tx) -> query(con, rs.sql().select(), keyHash));
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        Objects.requireNonNull(observed, "observed");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        // conditional on the observed state, as takeOver is: a claim taken over or completed meanwhile is kept
        return execute("resolve", observed.keyHash(), false, (con, tx) -> result == null
                ? update(con, rs.sql().resolveDelete(), ps -> bindObserved(ps, 1, d, observed)) == 1
                : update(con, rs.sql().resolveWithResult(), ps -> {
                    ps.setBytes(1, result);
                    d.bindInstant(ps, 2, expiresAt);
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
            d.bindInstant(ps, first + 2, lease);
        }
        d.bindInstant(ps, first + 3, observed.expiresAt());
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        Objects.requireNonNull(now, "now");
        if (batchSize <= 0) {
            throw new IllegalArgumentException("JdbcIdempotencyStore.purgeExpired: batchSize must be positive, was "
                    + batchSize);
        }
        Resolved rs = resolve();
        return execute("purgeExpired", "expired records", false, (con, tx) ->
                update(con, rs.sql().purge(), ps -> {
                    rs.dialect().bindInstant(ps, 1, now);
                    ps.setInt(2, batchSize);
                }));
    }

    /**
     * One statement through the index on {@code (status, expires_at)} ({@code <table>_status_expires_at}, which
     * {@code migrate-status-expires-index-*.sql} gives an older table): the NEEDS_REVIEW records and the IN_FLIGHT ones
     * whose lease ended by {@code now} (the caller's clock), grouped by operation. Joins the caller's transaction
     * when there is one, like {@link #find}.
     */
    @Override
    public List<Backlog> backlog(Instant now) {
        Objects.requireNonNull(now, "now");
        Resolved rs = resolve();
        JdbcDialect d = rs.dialect();
        return execute("backlog", "records by status", false, (con, tx) -> {
            Map<String, Backlog> byOperation = new TreeMap<>();
            try (PreparedStatement ps = con.prepareStatement(rs.sql().backlog())) {
                d.bindInstant(ps, 1, now);
                try (ResultSet r = ps.executeQuery()) {
                    while (r.next()) {
                        String operation = r.getString(1);
                        long count = r.getLong(3);
                        Backlog one = IdempotencyRecord.Status.NEEDS_REVIEW.name().equals(r.getString(2))
                                ? new Backlog(operation, count, d.instant(r, 4), 0, null)
                                : new Backlog(operation, 0, null, count, d.instant(r, 5));
                        byOperation.merge(operation, one, Backlog::plus);
                    }
                }
            }
            return List.copyOf(byOperation.values());
        });
    }

    @Override
    public List<IdempotencyRecord> listNeedsReview(int limit) {
        Resolved rs = resolve();
        return list("listNeedsReview", rs.sql().listNeedsReview(), limit, ps -> { });
    }

    @Override
    public List<IdempotencyRecord> listStuck(Instant now, int limit) {
        Objects.requireNonNull(now, "now");
        Resolved rs = resolve();
        return list("listStuck", rs.sql().listStuck(), limit, ps -> rs.dialect().bindInstant(ps, 1, now));
    }

    /** At most {@code limit} rows of a list (the driver stops reading there: {@code setMaxRows}). */
    private List<IdempotencyRecord> list(String task, String sql, int limit, SqlBinder binder) {
        if (limit <= 0) {
            throw new IllegalArgumentException("JdbcIdempotencyStore." + task + ": limit must be positive, was "
                    + limit);
        }
        return execute(task, "records by status", false, (con, tx) -> {
            List<IdempotencyRecord> found = new ArrayList<>();
            try (PreparedStatement ps = con.prepareStatement(sql)) {
                ps.setMaxRows(limit);
                binder.bind(ps);
                try (ResultSet r = ps.executeQuery()) {
                    while (r.next() && found.size() < limit) {
                        found.add(map(r));
                    }
                }
            }
            return List.copyOf(found);
        });
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
    private <T> T execute(String task, Object subject, boolean atomic, ConnectionWork<T> work) {
        Connection con = DataSourceUtils.getConnection(dataSource);
        boolean inCallerTransaction = false;
        try {
            // a connection bound by mere transaction synchronization (no transaction) still auto-commits
            if (DataSourceUtils.isConnectionTransactional(con, dataSource) && !con.getAutoCommit()) {
                inCallerTransaction = true;
                return inCallerTransaction(task, subject, con, work);
            }
            for (int attempt = 1; ; attempt++) {
                try {
                    return local(con, atomic, work);
                } catch (SerializationConflict e) {
                    if (attempt >= LOCAL_RETRIES) {
                        throw e;
                    }
                } catch (SQLException e) {
                    // the database rolled back the store's own short transaction: it is safe to run it again
                    if (attempt >= LOCAL_RETRIES || resolve().dialect().classify(e) != JdbcDialect.Failure.ABORTED) {
                        throw e;
                    }
                }
            }
        } catch (SQLException e) {
            if (inCallerTransaction && abortsCallerTransaction(con, e)) {
                throw aborted(task, subject, e);
            }
            DataAccessException translated = translator.translate("JdbcIdempotencyStore." + task + " on table "
                    + tableName, null, e);
            throw translated != null ? translated : new UncategorizedSQLException(task, null, e);
        } finally {
            DataSourceUtils.releaseConnection(con, dataSource);
        }
    }

    /**
     * Runs {@code work} in the caller's transaction. A conflict after which that transaction cannot go on (the
     * database rolled it back, or its snapshot can never see the key's outcome) is thrown as
     * {@link CallerTransactionAbortedException}; a lock timeout stays an answer unless the server rolled back the
     * transaction with it.
     */
    private <T> T inCallerTransaction(String task, Object subject, Connection con, ConnectionWork<T> work)
            throws SQLException {
        try {
            return work.run(con, true);
        } catch (SerializationConflict e) {
            throw aborted(task, subject, e);
        } catch (LockTimeout e) {
            if (rollsBackTransactionOnLockTimeout(con, e)) {
                throw aborted(task, subject, e);
            }
            throw e;
        }
    }

    private boolean abortsCallerTransaction(Connection con, SQLException e) {
        return switch (resolve().dialect().classify(e)) {
            case ABORTED -> true;
            case LOCK_TIMEOUT -> rollsBackTransactionOnLockTimeout(con, e);
            case OTHER -> false;
        };
    }

    /**
     * Whether the server rolled back the whole transaction with the lock timeout {@code timeout}: asked once per
     * store. When the server cannot say, the transaction is taken for lost (the caller retries it whole, which is
     * always safe; going on with a transaction that is gone is not).
     */
    private boolean rollsBackTransactionOnLockTimeout(Connection con, Exception timeout) {
        Boolean known = rollbackOnTimeout;
        if (known == null) {
            try {
                known = resolve().dialect().rollsBackTransactionOnLockTimeout(con);
            } catch (SQLException | RuntimeException e) {
                timeout.addSuppressed(e);
                return true;
            }
            rollbackOnTimeout = known;
        }
        return known;
    }

    private CallerTransactionAbortedException aborted(String task, Object subject, Exception e) {
        SQLException cause = (SQLException) (e instanceof SQLException ? e : e.getCause());
        CallerTransactionAbortedException aborted = new CallerTransactionAbortedException("JdbcIdempotencyStore."
                + task + " on table " + tableName + ", " + subjectText(subject) + ": the database "
                + (resolve().dialect().classify(cause) == JdbcDialect.Failure.LOCK_TIMEOUT
                        ? "rolled back the caller's whole transaction on a lock wait timeout "
                                + "(innodb_rollback_on_timeout=ON)"
                        : "aborted the caller's transaction (a deadlock, or a serialization failure: a row committed "
                                + "after its snapshot)")
                + ": " + cause.getMessage() + ". Nothing more of that transaction can commit: retry the whole "
                + "transaction, whose call then replays the key's outcome or runs", cause);
        if (e != cause) {
            for (Throwable suppressed : e.getSuppressed()) {
                aborted.addSuppressed(suppressed);
            }
        }
        return aborted;
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

    /**
     * {@code name} if it is a plain SQL identifier ({@code [A-Za-z_][A-Za-z0-9_]*}, at most 63 characters), optionally
     * {@code schema.name} where {@code qualified}: the only text any statement of this module takes from
     * configuration, so that none can carry SQL.
     *
     * @param what names the setting at fault in the message
     * @throws IllegalArgumentException if it is not
     */
    static String checkIdentifier(String what, String name, boolean qualified) {
        Objects.requireNonNull(name, what);
        String[] parts = name.split("\\.", -1);
        boolean valid = parts.length <= (qualified ? 2 : 1);
        for (String part : parts) {
            valid &= IDENTIFIER.matcher(part).matches();
        }
        if (!valid) {
            throw new IllegalArgumentException(what + ": '" + name + "' is not a plain SQL identifier (letters, digits"
                    + " and '_', not starting with a digit, at most 63 characters" + (qualified
                            ? ", optionally 'schema.table')" : ")"));
        }
        return name;
    }

    /** Whether a plain read finds a row. */
    private static boolean exists(Connection con, String sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
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
            this.tableName = checkIdentifier("JdbcIdempotencyStore.Builder.tableName", tableName, true);
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
