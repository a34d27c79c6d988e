package dev.idempotency.internal;

import dev.idempotency.store.IdempotencyRecord;
import org.jspecify.annotations.Nullable;

/**
 * A store front that holds committed, completed outcomes in memory (the Caffeine pre-filter): the executor asks it
 * first, before it builds a claim or enters the key's gate, since replaying a completed outcome claims nothing, waits
 * for no one and runs nothing. Internal: not an SPI; a store that does not implement it is simply claimed.
 */
public interface CompletedOutcomes {

    /**
     * The completed record of {@code keyHash} if this front holds it in memory, committed and not expired: exactly
     * what its {@code claim} would answer as {@code ClaimResult.cached}; otherwise null. Never asks a store, never
     * blocks, and changes nothing.
     */
    @Nullable IdempotencyRecord completed(byte[] keyHash);
}
