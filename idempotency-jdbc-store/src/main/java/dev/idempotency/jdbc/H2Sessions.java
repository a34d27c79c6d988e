package dev.idempotency.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.h2.engine.Constants;
import org.h2.engine.Session;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;

/**
 * Reads an H2 session's lock timeout, which H2 2.x shows in no {@code INFORMATION_SCHEMA} table: through the
 * engine's session object of an embedded connection. Kept apart from {@link H2Dialect} so that H2's classes are
 * loaded only when an H2 connection is in use.
 */
final class H2Sessions {

    /** H2's lock timeout for a new session (2,000 ms in H2 2.x), for a session that cannot tell its own. */
    static final int DEFAULT_LOCK_TIMEOUT_MILLIS = Constants.INITIAL_LOCK_TIMEOUT;

    private H2Sessions() {
    }

    /**
     * The session's current lock timeout in milliseconds (as set by {@code ;LOCK_TIMEOUT=} in the URL or
     * {@code SET LOCK_TIMEOUT}), or H2's default when the connection is a remote one (TCP server), which does not
     * expose it, or cannot be unwrapped to H2's connection.
     */
    static int lockTimeout(Connection con) throws SQLException {
        if (con.isWrapperFor(JdbcConnection.class)) {
            Session session = con.unwrap(JdbcConnection.class).getSession();
            if (session instanceof SessionLocal local) {
                return local.getLockTimeout();
            }
        }
        return DEFAULT_LOCK_TIMEOUT_MILLIS;
    }
}
