package dev.idempotency;

import dev.idempotency.store.IdempotencyRecord;

/**
 * What the claim phase of a call decided ({@code docs/engine.md}): the key is ours, a completed outcome is replayed,
 * or the store is down and the operation proceeds unguarded. Every other answer (in progress, key reused, outcome
 * unknown, a refusal) is an exception to the caller, thrown where it is decided.
 */
sealed interface Decision {

    /** The key is ours: the method runs, and the call settles its claim ({@link Settling}). */
    record Acquired(boolean transactional) implements Decision {
        private static final Acquired IN_TRANSACTION = new Acquired(true);
        private static final Acquired COMMITTED = new Acquired(false);

        /** @param transactional whether the claim lives in the caller's still-open transaction */
        static Acquired of(boolean transactional) {
            return transactional ? IN_TRANSACTION : COMMITTED;
        }
    }

    /** A completed outcome of these arguments is replayed; {@code cached}: the pre-filter held it. */
    record Replay(IdempotencyRecord record, boolean cached) implements Decision {
    }

    /** The store failed and the operation is {@link StoreDown#PROCEED_UNGUARDED}: the method runs with no claim. */
    record Unguarded(IdempotencyStoreException failure) implements Decision {
    }
}
