package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.jdbc.JdbcDialect.LockTimeout;
import dev.idempotency.jdbc.JdbcDialect.SerializationConflict;
import dev.idempotency.jdbc.JdbcDialect.SqlBinder;
import dev.idempotency.jdbc.StoreTransactions.ConnectionWork;
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
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.datasource.DataSourceUtils;

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

    private final DataSource dataSource;
    private final String tableName;
    private final @Nullable JdbcDialect configuredDialect;
    private final StoreTransactions transactions;
    /** The dialect and its statements, found on first use (so that building the store needs no connection). */
    private volatile @Nullable Rows resolved;

    private JdbcIdempotencyStore(Builder b) {
        this.dataSource = b.dataSource;
        this.tableName = b.tableName;
        this.configuredDialect = b.dialect;
        this.transactions = new StoreTransactions(b.dataSource, b.tableName, () -> resolve().dialect());
        if (b.dialect != null) {
            this.resolved = Rows.of(b.dialect, b.tableName);
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

    private Rows resolve() {
        Rows r = resolved;
        if (r == null) {
            synchronized (this) {
                r = resolved;
                if (r == null) {
                    JdbcDialect dialect = configuredDialect != null ? configuredDialect : detect();
                    r = Rows.of(dialect, tableName);
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
        Rows rows = resolve();
        ClaimStrategy claims = rows.claims();
        try {
            if (observed == null) {
                return execute(task, r, claims.claimNeedsLocalTransaction(), (con, inTransaction) ->
                        claims.claim(rows, con, r, inTransaction));
            }
            return execute(task, r, true, (con, inTransaction) ->
                    claims.takeOver(rows, con, r, observed, inTransaction));
        } catch (LockTimeout e) {
            logRestoreFailures(task, e);
            return ClaimResult.lockTimeout();
        } catch (SerializationConflict e) {
            // the store's own short transaction failed every attempt (in the caller's, execute threw the abort)
            IdempotencyInProgressException busy = new IdempotencyInProgressException(r.operation(), r.key(),
                    "idempotency key '" + r.key() + "' of operation " + r.operation() + " met concurrent writers "
                    + "that made the database roll back " + StoreTransactions.LOCAL_RETRIES + " attempts in a row "
                    + "(deadlocks or serialization failures); retry the call to get its outcome", e.getCause());
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

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(expiresAt, "expiresAt");
        return execute("complete", keyHash, false, new Completion(resolve(), keyHash, leaseUntil, result, expiresAt));
    }

    /** A completion's work and its statement's binder: one object per call, the commonest write after the claim. */
    private record Completion(Rows rs, byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt)
            implements ConnectionWork<Boolean>, SqlBinder {

        @Override
        public Boolean run(Connection con, boolean inCallerTransaction) throws SQLException {
            return rs.update(con, rs.sql().complete(), this) == 1;
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
        Rows rs = resolve();
        SqlBinder claim = ps -> {
            ps.setBytes(1, keyHash);
            rs.dialect().bindInstant(ps, 2, leaseUntil);
        };
        // the database's clock decides, inside the statement: the caller's now may run ahead of the lease's owner
        return execute("markNeedsReviewIfStale", keyHash, false, (con, inTransaction) ->
                rs.claims().markNeedsReviewIfStale(rs, con, claim, inTransaction));
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(newLeaseUntil, "newLeaseUntil");
        Rows rs = resolve();
        JdbcDialect d = rs.dialect();
        return execute("renew", keyHash, false, (con, tx) -> rs.update(con, rs.sql().renew(), ps -> {
            d.bindInstant(ps, 1, newLeaseUntil);
            ps.setBytes(2, keyHash);
            d.bindInstant(ps, 3, leaseUntil);
        }) == 1);
    }

    private boolean ifClaim(String task, String statement, byte[] keyHash, Instant leaseUntil) {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Rows rs = resolve();
        return execute(task, keyHash, false, (con, tx) -> rs.update(con, statement, ps -> {
            ps.setBytes(1, keyHash);
            rs.dialect().bindInstant(ps, 2, leaseUntil);
        }) == 1);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        Objects.requireNonNull(keyHash, "keyHash");
        Rows rs = resolve();
        return execute("find", keyHash, false, (con, tx) -> rs.query(con, rs.sql().select(), keyHash));
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        Objects.requireNonNull(observed, "observed");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Rows rs = resolve();
        JdbcDialect d = rs.dialect();
        // conditional on the observed state, as takeOver is: a claim taken over or completed meanwhile is kept
        return execute("resolve", observed.keyHash(), false, (con, tx) -> result == null
                ? rs.update(con, rs.sql().resolveDelete(), ps -> rs.bindObserved(ps, 1, observed)) == 1
                : rs.update(con, rs.sql().resolveWithResult(), ps -> {
                    ps.setBytes(1, result);
                    d.bindInstant(ps, 2, expiresAt);
                    rs.bindObserved(ps, 3, observed);
                }) == 1);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        Objects.requireNonNull(now, "now");
        if (batchSize <= 0) {
            throw new IllegalArgumentException("JdbcIdempotencyStore.purgeExpired: batchSize must be positive, was "
                    + batchSize);
        }
        Rows rs = resolve();
        return execute("purgeExpired", "expired records", false, (con, tx) ->
                rs.update(con, rs.sql().purge(), ps -> {
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
        Rows rs = resolve();
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
        Rows rs = resolve();
        return list("listNeedsReview", rs.sql().listNeedsReview(), limit, ps -> { });
    }

    @Override
    public List<IdempotencyRecord> listStuck(Instant now, int limit) {
        Objects.requireNonNull(now, "now");
        Rows rs = resolve();
        return list("listStuck", rs.sql().listStuck(), limit, ps -> rs.dialect().bindInstant(ps, 1, now));
    }

    /** At most {@code limit} rows of a list (the driver stops reading there: {@code setMaxRows}). */
    private List<IdempotencyRecord> list(String task, String sql, int limit, SqlBinder binder) {
        Rows rs = resolve();
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
                        found.add(rs.read(r));
                    }
                }
            }
            return List.copyOf(found);
        });
    }

    /** Runs {@code work} where the store works ({@link StoreTransactions#execute}). */
    private <T> T execute(String task, Object subject, boolean atomic, ConnectionWork<T> work) {
        return transactions.execute(task, subject, atomic, work);
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

    @Override
    public String toString() {
        Rows r = resolved;
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
