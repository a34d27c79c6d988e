package dev.idempotency;

/**
 * Hears the outcome of every idempotent call (metrics build on it). Called on the caller's thread after the
 * outcome is known; keep it fast, and do not throw: an exception from a listener is logged and ignored.
 */
@FunctionalInterface
public interface IdempotencyListener {

    /** A listener that does nothing. */
    IdempotencyListener NOOP = event -> { };

    void onEvent(IdempotencyEvent event);
}
