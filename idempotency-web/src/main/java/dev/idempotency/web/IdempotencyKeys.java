package dev.idempotency.web;

import java.util.Optional;
import java.util.UUID;

/**
 * The idempotency key of the logical call running on this thread, minted once at the outermost layer and read by every
 * layer inside it: {@link IdempotencyKeyInterceptor} sends it on every HTTP attempt, however many retry loops lie in
 * between.
 *
 * <pre>{@code
 * // the outermost layer, OUTSIDE every retry loop: one key per logical call
 * Receipt r = IdempotencyKeys.call(() ->
 *     retryTemplate.execute(() -> gateway.placeOrder(order)));   // every attempt sends the same key
 * }</pre>
 *
 * <p>A key made inside a retried method (a new UUID per attempt) is the bug this class exists to prevent: each attempt
 * would be a new request to the server, and each would run. {@link #call(Work)} therefore keeps a key that is already
 * bound: an inner layer that calls it too joins the outer layer's key instead of minting its own.
 *
 * <p>The key is bound to the thread (as a transaction is): work handed to another thread must be wrapped in
 * {@link #call(String, Work)} there, with {@link #current()} read before the hand-over.
 */
public final class IdempotencyKeys {

    private static final ThreadLocal<String> CURRENT = new ThreadLocal<>();

    private IdempotencyKeys() {
    }

    /** Work that runs with a key bound. */
    @FunctionalInterface
    public interface Work<T, E extends Throwable> {
        T run() throws E;
    }

    /** A new key: a random UUID. */
    public static String newKey() {
        return UUID.randomUUID().toString();
    }

    /** The key bound on this thread, if any. */
    public static Optional<String> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    /**
     * Runs {@code work} with the key already bound on this thread, or, at the outermost layer, with a new one.
     *
     * @return what {@code work} returned
     * @throws E what {@code work} threw
     */
    public static <T, E extends Throwable> T call(Work<T, E> work) throws E {
        String bound = CURRENT.get();
        return call(bound != null ? bound : newKey(), work);
    }

    /**
     * Runs {@code work} with {@code key} bound (the caller's own key: an order number, a workflow step, the key a
     * gateway received), and binds the previous key again afterwards.
     *
     * @throws IllegalArgumentException if the key is empty or cannot be sent in an HTTP header
     * @throws E                        what {@code work} threw
     */
    public static <T, E extends Throwable> T call(String key, Work<T, E> work) throws E {
        IdempotencyKeyHeader.format(key);
        String previous = CURRENT.get();
        CURRENT.set(key);
        try {
            return work.run();
        } finally {
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
        }
    }
}
