package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * MySQL (InnoDB), and MariaDB on a table made by {@code schema-mysql.sql}; {@link MariaDbDialect} extends it with a
 * one-statement claim.
 *
 * <p>The claim is {@code INSERT ... ON DUPLICATE KEY UPDATE} whose update changes nothing: a duplicate raises no
 * error, and any other error still does ({@code INSERT IGNORE} would turn them into warnings). Whether the row was
 * inserted cannot be told from the affected-rows count, which depends on the driver's {@code CLIENT_FOUND_ROWS}
 * setting (1 for an insert, and 0 or 1 for an unchanged duplicate); so the duplicate branch also stores a token unique
 * to this claim in a session variable, read back right after.
 *
 * <p>After a duplicate the row is read with {@code FOR UPDATE}, a locking read that sees the latest committed version
 * even under REPEATABLE READ, whose plain reads would keep showing the snapshot (where the row may not exist yet).
 *
 * <p>InnoDB keeps the lock of every row a write meets until the transaction ends, even a write that changes nothing
 * ({@link #claimStrategy()}: read first). So in the caller's transaction the store reads the key with a plain read
 * before it writes, and answers a row it sees without writing: a duplicate waiting for an owner that runs without a
 * transaction never holds the lock the owner needs to record its outcome. An insert that still meets a committed in-flight row
 * (committed after that read) gives up at once rather than wait holding its lock.
 *
 * <p>The wait is {@code innodb_lock_wait_timeout}, in whole seconds (at least one), set for the session around the
 * statement and put back after (the session's value is saved in a user variable by the same {@code SET}: one round
 * trip to set, one to restore). A lock wait timeout rolls back only the statement (unless the server runs with
 * {@code innodb_rollback_on_timeout}), so the caller's transaction stays usable.
 *
 * <p>{@code DATETIME(3)} has no time zone: instants are written as the text of their UTC {@code DATETIME} literal and
 * read as UTC {@link LocalDateTime}s, which the drivers pass through unconverted, so the session's {@code time_zone}
 * never shifts them.
 */
class MySqlDialect extends JdbcDialect {

    static final MySqlDialect INSTANCE = new MySqlDialect();

    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    private static final int ER_LOCK_DEADLOCK = 1213;
    private static final AtomicLong CLAIM_TOKENS = new AtomicLong(System.nanoTime());

    // assignments of one SET run left to right: the session's value is saved before ours replaces it
    private static final String SAVE_AND_SET_LOCK_TIMEOUT = "SET @idempotency_lock_wait = "
            + "@@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = ?";
    private static final String RESTORE_LOCK_TIMEOUT =
            "SET SESSION innodb_lock_wait_timeout = @idempotency_lock_wait";
    private static final String READ_CLAIM_TOKEN = "SELECT @idempotency_claim_token";
    private static final String READ_ROLLBACK_ON_TIMEOUT = "SELECT @@GLOBAL.innodb_rollback_on_timeout";

    /** The read after a conflict: a locking read, which sees the latest committed version. */
    static final String SELECT_LATEST = """
            SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                   expires_at
              FROM {table} WHERE key_hash = ? FOR UPDATE
            """;

    // walks the (status, expires_at) index's completed rows in expiry order, so that two nodes lock rows in the same
    // order and queue rather than deadlock
    static final String PURGE = """
            DELETE FROM {table} WHERE status = 'COMPLETED' AND expires_at <= ? AND expires_at <= {now}
             ORDER BY expires_at LIMIT ?
            """;

    /** MySQL and MariaDB have no IS NOT DISTINCT FROM. */
    static final String NULL_SAFE_EQUALS = "<=>";

    /** The columns are UTC DATETIME(3); NOW() would be in the session's time_zone. */
    static final String CLOCK = "UTC_TIMESTAMP(3)";

    static final Statements STATEMENTS = Statements.standard(
            // ON DUPLICATE KEY UPDATE that changes nothing: no duplicate-key error, and no other error swallowed;
            // the duplicate branch records this claim's token (last parameter, never 0) so that the conflict can be
            // told. The token is the IF's condition: an assignment under IS NULL is folded away by the optimizer
            """
            INSERT INTO {table} (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until,
                                 created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, 'IN_FLIGHT', NULL, ?, ?, ?)
            ON DUPLICATE KEY UPDATE key_hash = IF(@idempotency_claim_token := ?, key_hash, key_hash)
            """,
            SELECT_LATEST, PURGE, NULL_SAFE_EQUALS, CLOCK);

    MySqlDialect() {
    }

    @Override
    public String name() {
        return "mysql";
    }

    @Override
    Statements statements() {
        return STATEMENTS;
    }

    /**
     * An instant as the text of its UTC {@code DATETIME} literal, {@code yyyy-MM-dd HH:mm:ss[.SSSSSS]}: the literal
     * MariaDB Connector/J writes for a {@link LocalDateTime} (whose {@code DateTimeFormatter} costs about 1 KB of
     * garbage per bind, and {@code LocalDateTime.ofInstant} new zone rules), concatenated here from shared pieces;
     * the server reads it as the column's type, in a comparison as in an insert. A year outside 1-9999 (which no
     * {@code DATETIME} holds, and which the driver's pattern writes in years of an era) stays a
     * {@link LocalDateTime}, for the driver and the server to handle as before.
     */
    @Override
    Object timestamp(Instant instant) {
        long seconds = instant.getEpochSecond();
        int nano = instant.getNano();
        LocalDate date = LocalDate.ofEpochDay(Math.floorDiv(seconds, 86_400));
        int year = date.getYear();
        if (year < 1 || year > 9999) {
            return LocalDateTime.ofEpochSecond(seconds, nano, ZoneOffset.UTC);
        }
        int second = Math.floorMod(seconds, 86_400);
        String century = TWO_DIGITS[year / 100];
        String yy = TWO_DIGITS[year % 100];
        String month = TWO_DIGITS[date.getMonthValue()];
        String day = TWO_DIGITS[date.getDayOfMonth()];
        String hour = TWO_DIGITS[second / 3600];
        String minute = TWO_DIGITS[second / 60 % 60];
        String sec = TWO_DIGITS[second % 60];
        // the driver's rule: six digits of microseconds when the instant has a fraction, none otherwise
        if (nano == 0) {
            return century + yy + '-' + month + '-' + day + ' ' + hour + ':' + minute + ':' + sec;
        }
        int micros = nano / 1000;
        return century + yy + '-' + month + '-' + day + ' ' + hour + ':' + minute + ':' + sec + '.'
                + TWO_DIGITS[micros / 10_000] + TWO_DIGITS[micros / 100 % 100] + TWO_DIGITS[micros % 100];
    }

    @Override
    int nullTimestampType() {
        return java.sql.Types.TIMESTAMP;
    }

    @Override
    @Nullable Instant instant(ResultSet rs, int column) throws SQLException {
        LocalDateTime t = rs.getObject(column, LocalDateTime.class);
        return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }

    @Override
    <T> T withLockTimeout(Connection con, boolean inCallerTransaction, Duration timeout, SqlWork<T> work)
            throws SQLException {
        long seconds = atLeastOneSecond(timeout);
        try {
            // one round trip: the session's own value is kept in a user variable as ours is set
            try (PreparedStatement ps = con.prepareStatement(SAVE_AND_SET_LOCK_TIMEOUT)) {
                ps.setLong(1, seconds);
                ps.execute();
            }
            return thenRestore(work, () -> {
                try (PreparedStatement ps = con.prepareStatement(RESTORE_LOCK_TIMEOUT)) {
                    ps.execute();
                }
            });
        } catch (SQLException e) {
            // a deadlock: InnoDB rolled the whole transaction back, only a new transaction can go on
            throw asConflict(e);
        }
    }

    @Override
    boolean insertClaim(Connection con, Statements sql, SqlBinder binder) throws SQLException {
        long token = CLAIM_TOKENS.incrementAndGet();
        if (token == 0) {
            token = CLAIM_TOKENS.incrementAndGet();
        }
        try (PreparedStatement ps = con.prepareStatement(sql.insert())) {
            binder.bind(ps);
            ps.setLong(9, token);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = con.prepareStatement(READ_CLAIM_TOKEN); ResultSet rs = ps.executeQuery()) {
            rs.next();
            long seen = rs.getLong(1);
            return rs.wasNull() || seen != token;
        }
    }

    /** InnoDB keeps the lock of every row a write meets until the transaction ends: a plain read first. */
    @Override
    ClaimStrategy claimStrategy() {
        return ClaimStrategy.READ_FIRST;
    }

    @Override
    Failure classify(SQLException e) {
        return e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT ? Failure.LOCK_TIMEOUT
                : isDeadlock(e) ? Failure.ABORTED
                : Failure.OTHER;
    }

    @Override
    boolean rollsBackTransactionOnLockTimeout(Connection con) throws SQLException {
        // a server setting, read-only at run time: read once per store
        try (PreparedStatement ps = con.prepareStatement(READ_ROLLBACK_ON_TIMEOUT); ResultSet rs = ps.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    /** Whether an error is an InnoDB deadlock, after which the whole transaction was rolled back. */
    static boolean isDeadlock(SQLException e) {
        return e.getErrorCode() == ER_LOCK_DEADLOCK;
    }
}
