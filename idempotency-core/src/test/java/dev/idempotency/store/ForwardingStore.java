package dev.idempotency.store;

/** A store that forwards every call: tests override the one they break or count. */
public class ForwardingStore extends ForwardingIdempotencyStore {

    public ForwardingStore(IdempotencyStore delegate) {
        super(delegate);
    }
}
