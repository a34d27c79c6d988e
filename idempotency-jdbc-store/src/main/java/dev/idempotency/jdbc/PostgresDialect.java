package dev.idempotency.jdbc;

import dev.idempotency.jdbc.ClaimStrategy.ClaimAttempt;
import dev.idempotency.jdbc.ClaimStrategy.RowReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL. Any failed statement aborts the whole transaction there, so nothing the store does in the caller's
 * transaction may fail for an expected reason: the claim is {@code INSERT ... ON CONFLICT DO NOTHING} (a duplicate
 * raises no error), and the statements that may wait on another transaction run inside a savepoint, so that a lock
 * timeout or a serialization failure rolls back to the savepoint only and the caller's transaction stays usable.
 * The wait is {@code lock_timeout}, set transaction-locally ({@code set_config(..., true)}) and put back afterwards.
 */
final class PostgresDialect extends JdbcDialect {

    static final PostgresDialect INSTANCE = new PostgresDialect();

    private static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final String SERIALIZATION_FAILURE = "40001";
    private static final String DEADLOCK_DETECTED = "40P01";


    // ON CONFLICT DO NOTHING: a duplicate is no error, so the caller's transaction is never aborted by one; it still
    // waits for an uncommitted conflicting row, then inserts (that transaction rolled back) or not. The instants are
    // cast text (bindClaimInstant).
    private static final String INSERT = """
            INSERT INTO {table} (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until,
                                 created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, 'IN_FLIGHT', NULL, ?::timestamptz, ?::timestamptz, ?::timestamptz)
            ON CONFLICT (key_hash) DO NOTHING""";

    // The claim in one statement. First the key, a one-row WITH that also sets our lock_timeout (set_config takes
    // effect at once; a WITH with a volatile function is computed once, before the insert reads its row, so before
    // the insert looks for a conflicting row and may wait). Then the insert, a data-modifying WITH that takes its key
    // from it. Then the read of the key's row, which puts the caller's lock_timeout back: it counts the insert's rows
    // first (count(*) reads the WITH to its end, so the insert, with any wait for a conflicting row, is over before
    // the row is read and the setting restored) and is one row whether or not the key has one (a LEFT JOIN from that
    // one-row count), so the setting is always put back. The key hash is bound twice: through k for the insert, and as
    // a parameter of the statement for the read, so that on a hash-partitioned table PostgreSQL prunes the read to
    // the key's partition when it starts the statement; through k it could prune only as the read ran, after setting
    // up a scan of every partition (a third of the server's work for a claim there).
    // The read runs on the statement's snapshot, which does not show the row the insert has just made: after a claim
    // that inserted, the row comes back as NULLs, and nothing of it is formatted or sent. After an insert that did
    // nothing, it shows the row that holds the key when that row was committed before the statement began (a replay,
    // the usual case, or this transaction's own earlier claim); a row committed while the insert waited for it is
    // not shown (READ COMMITTED), and the store reads it with a statement of its own (ClaimAttempt.MET_UNREAD), one
    // round trip more for a duplicate that met its original in flight. Under REPEATABLE READ such a row makes the
    // insert itself fail (40001).
    // Parameters: our lock_timeout ('<n>ms'), the insert's eight (the key hash first), the key hash again. Columns:
    // the row's (COLUMNS), the restored setting, how many rows the insert made (0 or 1).
    private static String claimThenRead(String ourLockTimeout, String restore) {
        return "WITH k AS (SELECT CASE WHEN " + ourLockTimeout + " IS NOT NULL THEN ?::bytea END AS key_hash),\n"
                + "claim AS (" + INSERT.replace("VALUES (?,", "SELECT k.key_hash,")
                        .replace("?::timestamptz)\n", "?::timestamptz FROM k\n") + " RETURNING 1)\n"
                + "SELECT " + COLUMNS + restore + ", inserted.n\n"
                + "  FROM (SELECT count(*) AS n FROM claim) inserted\n"
                + "  LEFT JOIN {table} ON {table}.key_hash = ?";
    }

    // our lock_timeout, set at once
    private static final String OURS = "set_config('lock_timeout', ?, true)";

    // the same, first saving the caller's lock_timeout in a transaction-local setting of our own (nested, so that it
    // runs before ours is set)
    private static final String OURS_SAVING_THEIRS = """
            set_config('lock_timeout',
                       CASE WHEN set_config('idempotency.lock_timeout', current_setting('lock_timeout'), true)
                                 IS NOT NULL THEN ? END,
                       true)""";

    private static final int INSERTED_COLUMN = 12;
    // the key hash of the read, after our lock_timeout and the insert's eight
    private static final int READ_KEY_PARAMETER = 10;

    // The claim of a new key in the caller's transaction, one constant text prepared once and sent in one round trip
    // (pgjdbc sends the statements of one execute with a single Sync), three statements: a savepoint; the insert and
    // the read (the insert saves the caller's lock_timeout and sets ours, the read puts the caller's back); the
    // savepoint released. When a statement fails (a lock timeout, a serialization failure, a deadlock) the server
    // skips the rest, and ROLLBACK TO SAVEPOINT undoes the insert and both settings.
    private static final String CLAIM_AT_ONCE = String.join(";\n",
            "SAVEPOINT idempotency_claim",
            claimThenRead(OURS_SAVING_THEIRS,
                    ", set_config('lock_timeout', current_setting('idempotency.lock_timeout'), true)"),
            "RELEASE SAVEPOINT idempotency_claim");
    private static final int AT_ONCE_RESULTS = 3;
    private static final int AT_ONCE_READ = 1;

    // the same in the store's own short transaction: nothing to save or put back, its end resets lock_timeout (the
    // column of the restored setting is a NULL, so that the columns are the same)
    private static final String CLAIM_AT_ONCE_LOCAL = claimThenRead(OURS, ", NULL");
    private static final int AT_ONCE_LOCAL_RESULTS = 1;
    private static final int AT_ONCE_LOCAL_READ = 0;

    private static final Statements STATEMENTS = Statements.standard(
            INSERT,
            // SKIP LOCKED: nodes purging at once take disjoint batches instead of queueing on each other's rows
            """
            DELETE FROM {table}
             WHERE key_hash IN (SELECT key_hash FROM {table}
                                 WHERE status = 'COMPLETED' AND expires_at <= ? AND expires_at <= {now}
                                 ORDER BY expires_at
                                 LIMIT ?
                                 FOR UPDATE SKIP LOCKED)
            """,
            // the time when the statement runs; now() would be the start of the transaction
            "clock_timestamp()").withClaimAtOnce(CLAIM_AT_ONCE, CLAIM_AT_ONCE_LOCAL);

    private PostgresDialect() {
    }

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    Statements statements() {
        return STATEMENTS;
    }

    /** The name the table's digest domain takes, after the table's: {@code schema-postgresql.sql}. */
    static final String DIGEST_DOMAIN_SUFFIX = "_sha256";

    @Override
    void companionsToDrop(String table, List<String> drops) {
        drops.add("DROP DOMAIN IF EXISTS " + table + DIGEST_DOMAIN_SUFFIX);
    }

    /** Where the migration of a table with the digests as plain {@code BYTEA} is on the classpath. */
    static final String DIGEST_DOMAIN_MIGRATION = "dev/idempotency/jdbc/migrate-postgresql-sha256-domain.sql";

    /**
     * When the table keeps its digests as plain {@code BYTEA} (made by an earlier script, with a CHECK constraint on
     * each): migrate it to the script's domain. The fingerprint tells, which the migration moves on every table (a
     * partitioned table's key hash, its partition key, stays). The advice is optional: when the catalog cannot be
     * read, none.
     */
    @Override
    @Nullable String schemaAdvice(Connection con, String table) {
        try (PreparedStatement ps = con.prepareStatement("""
                SELECT t.typtype FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                 WHERE a.attrelid = to_regclass(?) AND a.attname = 'fingerprint'""")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || "d".equals(rs.getString(1))) {
                    return null;
                }
            }
        } catch (SQLException e) {
            return null;
        }
        return "JdbcIdempotencyStore: the table " + table + " keeps its SHA-256 digests as plain BYTEA with a CHECK"
                + " constraint on each (made by an earlier schema-postgresql.sql), which PostgreSQL reads and plans"
                + " anew for every INSERT and UPDATE; migrate it with the script " + DIGEST_DOMAIN_MIGRATION
                + " (in the idempotency-jdbc-store jar; it rewrites nothing) to take about a tenth off the server's"
                + " work for a claim and its completion";
    }

    @Override
    <T> T withLockTimeout(Connection con, boolean inCallerTransaction, Duration timeout, SqlWork<T> work)
            throws SQLException {
        // a number of our own making, never user input: safe to send as text
        String ours = "'" + lockTimeoutText(timeout) + "'";
        @Nullable String previous = null;
        boolean savepoint = false;
        try {
            if (inCallerTransaction) {
                // one round trip: a savepoint, the caller's lock_timeout, ours (statements of one execute travel
                // together)
                previous = enterSavepoint(con, ours);
                savepoint = true;
            } else {
                run(con, "SELECT set_config('lock_timeout', " + ours + ", true)");
            }
            T result = work.run();
            if (savepoint) {
                // the transaction goes on: give it back its own lock_timeout, in one more round trip
                run(con, "SELECT set_config('lock_timeout', " + quoted(previous) + ", true); " + RELEASE);
            }
            return result;
        } catch (SQLException e) {
            if (savepoint) {
                // undoes the failed statement and the lock_timeout change, and un-aborts the caller's transaction
                rollbackTo(con, e);
            }
            throw asConflict(e);
        } catch (RuntimeException e) {
            if (savepoint) {
                rollbackTo(con, e);
            }
            throw e;
        }
    }

    /**
     * An instant as a {@link java.sql.Timestamp} of its epoch milliseconds (exact: the executor truncates instants to
     * milliseconds). pgjdbc writes it with the offset of its cached default calendar, which {@code timestamptz} turns
     * back into the same instant, whatever the JVM's or the session's time zone; an {@code OffsetDateTime} would cost
     * a new calendar and zone rules per bind.
     */
    @Override
    Object timestamp(java.time.Instant instant) {
        return new java.sql.Timestamp(instant.toEpochMilli());
    }

    // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the years Instant.toString writes as PostgreSQL reads them
    private static final long FIRST_ISO_SECOND = -62_135_596_800L;
    private static final long LAST_ISO_SECOND = 253_402_300_799L;

    /**
     * An instant as its ISO-8601 text ({@code 2026-12-01T17:50:00.123Z}, UTC, exact to the millisecond), of a type
     * the server infers from the column it meets ({@code Types.OTHER}): pgjdbc writes a {@code Timestamp} as text too,
     * but through a calendar and a formatter it builds per statement (about 2 KB per guarded call, measured with JFR);
     * this is one string, made by {@link #isoText}. Years outside 1-9999, which that text would not carry, keep
     * {@link #timestamp}.
     */
    @Override
    void bindInstant(PreparedStatement ps, int index, java.time.Instant instant) throws SQLException {
        bindIsoText(ps, index, instant, java.sql.Types.OTHER);
    }

    /**
     * The claim's instants as text of a type the client names ({@code varchar}, cast to {@code timestamptz} by the
     * statement), not {@code Types.OTHER}: the claim in one round trip is a statement that returns rows, and pgjdbc
     * spends a round trip of its own describing such a statement on every execution when the server is left to infer
     * a parameter's type ({@code RoundTripsIT}: 5 instead of 4 per first execution, 3 instead of 2 per replay).
     * Outside the years 1-9999 it is pgjdbc's own text of a {@link #timestamp}, a round trip more.
     */
    @Override
    void bindClaimInstant(PreparedStatement ps, int index, java.time.Instant instant) throws SQLException {
        bindIsoText(ps, index, instant, java.sql.Types.VARCHAR);
    }

    /** {@link #isoText} bound as {@code type}, for the years 1-9999; outside them a {@link #timestamp}. */
    private void bindIsoText(PreparedStatement ps, int index, java.time.Instant instant, int type)
            throws SQLException {
        long second = instant.getEpochSecond();
        if (second >= FIRST_ISO_SECOND && second <= LAST_ISO_SECOND) {
            ps.setObject(index, isoText(second, instant.getNano()), type);
        } else {
            ps.setObject(index, timestamp(instant));
        }
    }

    /**
     * {@link java.time.Instant#toString()} of an instant of the years 1-9999, made with nothing but the string:
     * {@code Instant.toString} goes through {@code DateTimeFormatter.ISO_INSTANT}, a {@code LocalDateTime}, a print
     * context and a builder, some 500 bytes of garbage per instant, five instants per guarded call. The same text:
     * {@code yyyy-MM-ddTHH:mm:ss}, then the fraction in groups of three digits as long as it needs (none, 3, 6 or 9),
     * then {@code Z}. Concatenated from shared pieces, so that the string's bytes are written once, in place.
     */
    static String isoText(long epochSecond, int nano) {
        java.time.LocalDate date = java.time.LocalDate.ofEpochDay(Math.floorDiv(epochSecond, 86_400));
        int second = Math.floorMod(epochSecond, 86_400);
        String century = TWO_DIGITS[date.getYear() / 100];
        String year = TWO_DIGITS[date.getYear() % 100];
        String month = TWO_DIGITS[date.getMonthValue()];
        String day = TWO_DIGITS[date.getDayOfMonth()];
        String hour = TWO_DIGITS[second / 3600];
        String minute = TWO_DIGITS[second / 60 % 60];
        String sec = TWO_DIGITS[second % 60];
        // one concatenation per shape: each writes its string's bytes once, with no intermediate string
        if (nano == 0) {
            return century + year + '-' + month + '-' + day + 'T' + hour + ':' + minute + ':' + sec + 'Z';
        }
        int millis = nano / 1_000_000;
        String milli1 = TWO_DIGITS[millis / 10];
        char milli2 = (char) ('0' + millis % 10);
        if (nano % 1_000_000 == 0) {
            return century + year + '-' + month + '-' + day + 'T' + hour + ':' + minute + ':' + sec + '.' + milli1
                    + milli2 + 'Z';
        }
        if (nano % 1000 == 0) {
            int micros = nano / 1000 % 1000;
            return century + year + '-' + month + '-' + day + 'T' + hour + ':' + minute + ':' + sec + '.' + milli1
                    + milli2 + TWO_DIGITS[micros / 10] + (char) ('0' + micros % 10) + 'Z';
        }
        int rest = nano % 1_000_000;
        return century + year + '-' + month + '-' + day + 'T' + hour + ':' + minute + ':' + sec + '.' + milli1
                + milli2 + TWO_DIGITS[rest / 10_000] + TWO_DIGITS[rest / 100 % 100] + TWO_DIGITS[rest % 100] + 'Z';
    }

    @Override
    java.time.@Nullable Instant instant(ResultSet rs, int column) throws SQLException {
        java.sql.Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

    /** A claim of a new key is {@link #claimAtOnce}, one round trip. */
    private final ClaimStrategy claims = ClaimStrategy.oneRoundTrip(this::claimAtOnce);

    @Override
    ClaimStrategy claimStrategy() {
        return claims;
    }

    private ClaimAttempt claimAtOnce(Connection con, boolean inCallerTransaction, Statements sql,
            dev.idempotency.store.ClaimRequest r, RowReader reader) throws SQLException {
        int results = inCallerTransaction ? AT_ONCE_RESULTS : AT_ONCE_LOCAL_RESULTS;
        int read = inCallerTransaction ? AT_ONCE_READ : AT_ONCE_LOCAL_READ;
        try (PreparedStatement ps = con.prepareStatement(
                inCallerTransaction ? sql.claimAtOnce() : sql.claimAtOnceLocal())) {
            ps.setString(1, lockTimeoutText(r.lockTimeout()));
            bindClaim(ps, 2, r);
            ps.setBytes(READ_KEY_PARAMETER, r.keyHash());
            @Nullable ClaimAttempt attempt = null;
            // the results come in the order of the statements: walk exactly as many as were sent
            boolean isResultSet = ps.execute();
            for (int i = 0; i < results; i++) {
                if (i > 0) {
                    isResultSet = ps.getMoreResults();
                }
                if (i == read && isResultSet) {
                    try (ResultSet rs = ps.getResultSet()) {
                        if (rs.next()) {
                            attempt = rs.getLong(INSERTED_COLUMN) == 1 ? ClaimAttempt.INSERTED
                                    : rs.getObject(1) != null ? ClaimAttempt.met(reader.read(rs))
                                    // committed while the insert waited for it (or deleted since): not in the
                                    // statement's snapshot
                                    : ClaimAttempt.MET_UNREAD;
                        }
                    }
                }
            }
            if (attempt == null) {
                throw new SQLException("PostgreSQL returned no row from the claim's read");
            }
            return attempt;
        } catch (SQLException e) {
            if (inCallerTransaction) {
                // undoes whatever ran (the insert, both settings) and un-aborts the caller's transaction
                rollbackTo(con, e);
            }
            throw asConflict(e);
        }
    }

    /** The last lock timeout's text, {@code <n>ms}: stores keep one timeout, so it is made once, not per claim. */
    private volatile LockTimeoutText lockTimeoutText = new LockTimeoutText(0, "0ms");

    private record LockTimeoutText(long millis, String text) {
    }

    private String lockTimeoutText(Duration timeout) {
        long millis = atLeastOneMilli(timeout);
        LockTimeoutText last = lockTimeoutText;
        if (last.millis() != millis) {
            last = new LockTimeoutText(millis, millis + "ms");
            lockTimeoutText = last;
        }
        return last.text();
    }

    private static final String SAVEPOINT = "SAVEPOINT idempotency_claim";
    private static final String RELEASE = "RELEASE SAVEPOINT idempotency_claim";

    private static String enterSavepoint(Connection con, String ours) throws SQLException {
        try (Statement st = con.createStatement()) {
            st.execute(SAVEPOINT + "; SELECT current_setting('lock_timeout'), set_config('lock_timeout', " + ours
                    + ", true)");
            while (!st.getMoreResults()) {
                if (st.getUpdateCount() == -1) {
                    throw new SQLException("no lock_timeout came back from PostgreSQL");
                }
            }
            try (ResultSet rs = st.getResultSet()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    /** A setting PostgreSQL gave us, as an SQL string literal (quotes doubled). */
    private static String quoted(@Nullable String value) {
        return "'" + (value == null ? "0" : value.replace("'", "''")) + "'";
    }

    private static void run(Connection con, String sql) throws SQLException {
        try (Statement st = con.createStatement()) {
            st.execute(sql);
        }
    }

    private static void rollbackTo(Connection con, Exception cause) {
        try {
            run(con, "ROLLBACK TO SAVEPOINT idempotency_claim; " + RELEASE);
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    Failure classify(SQLException e) {
        String state = e.getSQLState();
        return LOCK_NOT_AVAILABLE.equals(state) ? Failure.LOCK_TIMEOUT
                : SERIALIZATION_FAILURE.equals(state) || DEADLOCK_DETECTED.equals(state) ? Failure.ABORTED
                : Failure.OTHER;
    }

    @Override
    boolean insertClaim(Connection con, Statements sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql.insert())) {
            binder.bind(ps);
            return ps.executeUpdate() == 1;
        }
    }
}
