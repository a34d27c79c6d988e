package dev.idempotency.store;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Thrown by a {@link CircuitBreakerStore} whose circuit is open: the store was not asked, because it kept failing.
 * The executor treats it as any other store failure (the operation's {@link dev.idempotency.StoreDown} decides).
 */
public final class CircuitOpenException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long opening;
    private final Instant openUntil;

    CircuitOpenException(long opening, Instant openUntil, @Nullable Throwable lastFailure) {
        super("the idempotency store's circuit is open (it kept failing) until " + openUntil
                + ": the store was not asked", lastFailure, false, false);
        this.opening = opening;
        this.openUntil = openUntil;
    }

    /** Which opening of the circuit this is (1 for the first): the same number for every call it refused. */
    public long opening() {
        return opening;
    }

    /** When the circuit lets one trial call through again. */
    public Instant openUntil() {
        return openUntil;
    }
}
