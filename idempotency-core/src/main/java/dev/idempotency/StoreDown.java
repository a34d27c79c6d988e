package dev.idempotency;

/**
 * What an idempotent call does when its store is unavailable: its key cannot be claimed, or its outcome cannot be
 * recorded, because the store threw (connection refused, pool exhausted, a timeout) or its circuit breaker is open
 * ({@link dev.idempotency.store.CircuitBreakerStore}). Library answers are not store failures: a key used with other
 * arguments, an attempt in flight or an outcome held for review are reported as always, and a transaction the
 * database already rolled back ({@link dev.idempotency.store.CallerTransactionAborted}) is passed on unchanged.
 *
 * @see Idempotent#onStoreDown()
 */
public enum StoreDown {

    /**
     * The default: the call fails with {@link IdempotencyStoreException}, which says whether the method ran (a
     * failed claim: it did not, a retry is safe; a failed record: it did, and its outcome may not be recorded).
     */
    FAIL,

    /**
     * {@link Tier#REVERSIBLE} operations with a compensation only: the method runs without the protection of its
     * key, the call is published as {@link IdempotencyEvent.Outcome#UNGUARDED} (tag {@code unguarded}) and logged
     * as a warning once per operation per outage. Nothing is recorded for it, neither now nor when the store is
     * back: a retry after the outage runs the method again, and the compensation is how a duplicate is undone.
     * A failed record after the method ran returns the method's result instead of failing; the claim it could not
     * complete stays in flight until its lease ends, then a retry takes it over. {@link Tier#IRREVERSIBLE}
     * operations always fail: the annotation processor and {@link IdempotentOperation.Builder#build()} refuse this
     * value on any tier but {@code REVERSIBLE}, and without a compensation.
     */
    PROCEED_UNGUARDED
}
