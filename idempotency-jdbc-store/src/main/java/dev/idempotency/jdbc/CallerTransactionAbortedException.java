package dev.idempotency.jdbc;

import dev.idempotency.store.CallerTransactionAborted;
import org.springframework.dao.PessimisticLockingFailureException;

/**
 * The database ended the caller's transaction, or made it unable to ever see the key's outcome, while the store
 * worked in it: an InnoDB deadlock victim (1213), an InnoDB lock wait timeout on a server running with
 * {@code innodb_rollback_on_timeout=ON} (1205), a PostgreSQL serialization failure (40001) or deadlock (40P01), an H2
 * deadlock or concurrent update. Only a new transaction can go on, and its retry replays the key's outcome.
 *
 * <p>A Spring {@link PessimisticLockingFailureException}, hence a {@code TransientDataAccessException}: what
 * {@code @Retryable} and {@code RetryTemplate} users retry on. It implements {@link CallerTransactionAborted}, so that
 * the executor marks the transaction rollback-only and passes it on unwrapped. Package-private: catch it as either.
 * Thrown only from a call made in the caller's transaction; without one the store retries its own short transaction.
 */
final class CallerTransactionAbortedException extends PessimisticLockingFailureException
        implements CallerTransactionAborted {

    private static final long serialVersionUID = 1L;

    CallerTransactionAbortedException(String message, Throwable cause) {
        super(message, cause);
    }
}
