package dev.idempotency.store;

/**
 * Marks a store failure after which the caller's transaction cannot go on: the database rolled it back whole (an
 * InnoDB deadlock victim, a lock wait timeout under {@code innodb_rollback_on_timeout}), or its snapshot can never see
 * the key's outcome (a serialization failure under {@code REPEATABLE READ}). Only a new transaction can go on.
 *
 * <p>A store throws such an exception (a {@code RuntimeException} implementing this interface) from a call made
 * inside the caller's transaction; the executor then marks that transaction rollback-only, so that nothing the
 * caller does afterwards can commit, and rethrows the exception unchanged rather than wrapping it, so that a retry
 * of the whole transaction ({@code @Retryable} on Spring's {@code TransientDataAccessException}, which the JDBC
 * store's exception is) replays the recorded outcome.
 */
public interface CallerTransactionAborted {
}
