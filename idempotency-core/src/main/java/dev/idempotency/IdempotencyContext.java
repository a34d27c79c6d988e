package dev.idempotency;

import java.util.Optional;

/**
 * What the current thread knows of idempotent calls.
 *
 * <p>Inside a running idempotent method, {@link #current()} names the call. Around a piece of work (an HTTP request),
 * {@link #open()} starts collecting outcomes, so that the HTTP layer can answer {@code Idempotent-Replayed: true}:
 * <pre>{@code
 * try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
 *     Receipt r = orders.createOrder(approvalNo, request);
 *     if (scope.replayed()) response.setHeader("Idempotent-Replayed", "true");
 * }
 * }</pre>
 */
public final class IdempotencyContext {

    private static final ThreadLocal<Call> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<Scope> SCOPE = new ThreadLocal<>();

    private IdempotencyContext() {
    }

    /** The idempotent call whose method is running on this thread, if any. */
    public static Optional<Call> current() {
        return Optional.ofNullable(CURRENT.get());
    }

    /**
     * Starts collecting the outcomes of the idempotent calls made on this thread while the scope is open, until it is
     * closed (a call made before it opened is not reported to it, even if its transaction commits later).
     */
    public static Scope open() {
        Scope scope = new Scope(SCOPE.get());
        SCOPE.set(scope);
        return scope;
    }

    static Call enter(Call call) {
        Call previous = CURRENT.get();
        CURRENT.set(call);
        return previous;
    }

    static void exit(Call previous) {
        // set, not remove: the thread's entry stays (holding no call) for the next call to reuse, where a removed
        // one would be made anew by every call
        CURRENT.set(previous);
    }

    /** Whether a scope is open on this thread, to be told the outcomes of the calls made in it. */
    static boolean collecting() {
        return SCOPE.get() != null;
    }

    static void record(IdempotencyEvent.Outcome outcome) {
        for (Scope s = SCOPE.get(); s != null; s = s.parent) {
            s.last = outcome;
            if (outcome == IdempotencyEvent.Outcome.REPLAYED || outcome == IdempotencyEvent.Outcome.REPLAYED_CACHED) {
                s.replayed = true;
            }
        }
    }

    /**
     * The call running on this thread.
     *
     * @param operation the operation name
     * @param key       the readable key
     */
    public record Call(String operation, String key) {
    }

    /** Outcomes collected since {@link #open()}. */
    public static final class Scope implements AutoCloseable {
        private final Scope parent;
        private volatile boolean replayed;
        private volatile IdempotencyEvent.Outcome last;

        private Scope(Scope parent) {
            this.parent = parent;
        }

        /** Whether any idempotent call in this scope returned a recorded result instead of running. */
        public boolean replayed() {
            return replayed;
        }

        /** The outcome of the last idempotent call in this scope. */
        public Optional<IdempotencyEvent.Outcome> lastOutcome() {
            return Optional.ofNullable(last);
        }

        @Override
        public void close() {
            if (parent == null) {
                SCOPE.remove();
            } else {
                SCOPE.set(parent);
            }
        }
    }
}
