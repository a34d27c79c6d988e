package dev.idempotency.store;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Thrown by a {@link CircuitBreakerStore} whose circuit is open: the store was not asked, because it kept failing;
 * or by the call whose failure opened it ({@link #storeAsked()}), with that failure as its cause.
 * The executor treats it as any other store failure (the operation's {@link dev.idempotency.StoreDown} decides).
 */
public final class CircuitOpenException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long opening;
    private final Instant openUntil;
    private final boolean storeAsked;

    CircuitOpenException(long opening, Instant openUntil, @Nullable Throwable lastFailure, boolean storeAsked) {
        super(storeAsked ? "the idempotency store failed, and its circuit opened until " + openUntil
                : "the idempotency store's circuit is open (it kept failing) until " + openUntil
                + ": the store was not asked", lastFailure, false, storeAsked);
        this.opening = opening;
        this.openUntil = openUntil;
        this.storeAsked = storeAsked;
    }

    /**
     * Whether this call reached the store: true for the call whose failure opened the circuit (the failure is the
     * cause), false for every call refused while it is open.
     */
    public boolean storeAsked() {
        return storeAsked;
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
