package dev.idempotency.jdbc;

import dev.idempotency.jdbc.JdbcDialect.LockTimeout;
import dev.idempotency.jdbc.JdbcDialect.SerializationConflict;
import dev.idempotency.store.ClaimRequest;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HexFormat;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Where {@link JdbcIdempotencyStore} runs its work: on the caller's transactional connection when there is one,
 * otherwise on a connection of the pool, in a short transaction of its own where the work needs one. It tells apart
 * what a failure did to the transaction ({@link JdbcDialect#classify}): the caller's transaction aborted by the
 * database is thrown as {@link CallerTransactionAbortedException}, the store's own short transaction rolled back by it
 * is retried, anything else is translated into a Spring {@link DataAccessException}.
 */
final class StoreTransactions {

    /** How often the store's own short transaction is tried when the database rolls it back whole. */
    static final int LOCAL_RETRIES = 3;

    private final DataSource dataSource;
    private final String tableName;
    private final Supplier<JdbcDialect> dialect;
    private final SQLExceptionTranslator translator;
    /** Whether the server rolls back a whole transaction on a lock wait timeout; read on the first one. */
    private volatile @Nullable Boolean rollbackOnTimeout;

    /** @param dialect the store's dialect, found on first use */
    StoreTransactions(DataSource dataSource, String tableName, Supplier<JdbcDialect> dialect) {
        this.dataSource = dataSource;
        this.tableName = tableName;
        this.dialect = dialect;
        this.translator = new SQLErrorCodeSQLExceptionTranslator(dataSource);
    }

    /** Work on a connection that either carries the caller's transaction or is the store's own. */
    @FunctionalInterface
    interface ConnectionWork<T> {
        T run(Connection con, boolean inCallerTransaction) throws SQLException;
    }

    /**
     * Runs {@code work} on the caller's transactional connection when there is one; otherwise on a connection of the
     * pool, in a local transaction committed before returning when {@code atomic} (several statements) or when the
     * connection does not auto-commit. Deadlocks and serialization failures of a local transaction are retried: the
     * database rolled it back whole.
     *
     * @param task    the store's method, named by failures
     * @param subject what a failure names: a {@link ClaimRequest} (its key), a key hash, or a text
     */
    <T> T execute(String task, Object subject, boolean atomic, ConnectionWork<T> work) {
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
                    if (attempt >= LOCAL_RETRIES || dialect.get().classify(e) != JdbcDialect.Failure.ABORTED) {
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
        return switch (dialect.get().classify(e)) {
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
                known = dialect.get().rollsBackTransactionOnLockTimeout(con);
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
                + (dialect.get().classify(cause) == JdbcDialect.Failure.LOCK_TIMEOUT
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

    /**
     * What a failure names, made only when one is thrown: a claim's key, a key hash, or the text given. (A subject is
     * passed as it is, not as a lambda that describes it, which would cost an object on every call.)
     */
    private static String subjectText(Object subject) {
        return subject instanceof ClaimRequest r ? "idempotency key '" + r.key() + "' of operation " + r.operation()
                : subject instanceof byte[] keyHash ? "idempotency key hash " + HexFormat.of().formatHex(keyHash)
                : String.valueOf(subject);
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
}
