package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

/**
 * H2 2.x. A duplicate INSERT fails with SQLState 23505 without harming the transaction (H2 rolls back only the
 * statement), so the claim is a plain INSERT whose duplicate-key error, and only that one, means "the key exists".
 * The lock wait is H2's session setting {@code LOCK_TIMEOUT}: the session's own value is read first (H2 shows it in
 * no {@code INFORMATION_SCHEMA} table, so it is read from the embedded engine's session, see {@link H2Sessions}) and
 * put back exactly after each claim, so that a pooled session keeps its {@code ;LOCK_TIMEOUT=} of the URL. A remote
 * (TCP server) session cannot tell its value: it gets H2's default back, 2,000 ms.
 */
final class H2Dialect extends JdbcDialect {

    static final H2Dialect INSTANCE = new H2Dialect();

    private static final String DUPLICATE_KEY = "23505";
    private static final int LOCK_TIMEOUT_ERROR = 50200;
    private static final int CONCURRENT_UPDATE_ERROR = 90131;
    private static final int DEADLOCK_ERROR = 40001;

    private static final String SET_LOCK_TIMEOUT = "SET LOCK_TIMEOUT ?";

    private static final Statements STATEMENTS = Statements.standard(
            """
            INSERT INTO {table} (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until,
                                 created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, 'IN_FLIGHT', NULL, ?, ?, ?)
            """,
            """
            DELETE FROM {table} WHERE status = 'COMPLETED' AND expires_at <= ? AND expires_at <= {now}
             FETCH FIRST ? ROWS ONLY
            """,
            // TIMESTAMP WITH TIME ZONE, as the columns. H2 answers the start of the transaction (of the statement
            // without one): inside a caller's long transaction it is earlier than the real time, never later, so a
            // decision confirmed with it can only come late, never too early
            "CURRENT_TIMESTAMP(3)");

    private H2Dialect() {
    }

    @Override
    public String name() {
        return "h2";
    }

    @Override
    Statements statements() {
        return STATEMENTS;
    }

    @Override
    <T> T withLockTimeout(Connection con, boolean inCallerTransaction, Duration timeout, SqlWork<T> work)
            throws SQLException {
        int previous = H2Sessions.lockTimeout(con);
        setLockTimeout(con, atLeastOneMilli(timeout));
        try {
            return thenRestore(work, () -> setLockTimeout(con, previous));
        } catch (SQLException e) {
            throw asConflict(e);
        }
    }

    private static void setLockTimeout(Connection con, long millis) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(SET_LOCK_TIMEOUT)) {
            ps.setLong(1, millis);
            ps.execute();
        }
    }

    @Override
    Failure classify(SQLException e) {
        int code = e.getErrorCode();
        return code == LOCK_TIMEOUT_ERROR ? Failure.LOCK_TIMEOUT
                : code == CONCURRENT_UPDATE_ERROR || code == DEADLOCK_ERROR ? Failure.ABORTED
                : Failure.OTHER;
    }

    @Override
    ClaimStrategy claimStrategy() {
        return ClaimStrategy.INSERT_THEN_READ;
    }

    @Override
    boolean insertClaim(Connection con, Statements sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql.insert())) {
            binder.bind(ps);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            if (DUPLICATE_KEY.equals(e.getSQLState())) {
                // only the statement failed: H2 keeps the transaction, and the row is read next
                return false;
            }
            throw e;
        }
    }
}
