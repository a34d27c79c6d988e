package dev.idempotency;

import java.util.Optional;

/**
 * Wraps each idempotent call of an {@link IdempotentExecutor}, from the key to the recorded outcome, so that a
 * tracing or observation framework can open a span around it (an {@link IdempotencyListener} only hears about a call
 * once it is over). {@code idempotency-core}'s {@code MicrometerIdempotencyObserver} opens a Micrometer
 * {@code Observation}.
 *
 * <p>An implementation must call {@link Invocation#proceed()} exactly once, on the calling thread, and return what
 * it returns or let what it throws pass unchanged. {@link Tier#READ_ONLY} calls are never observed: they bypass the
 * executor entirely.
 */
@FunctionalInterface
public interface IdempotencyObserver {

    /** Observes nothing: every call just proceeds. */
    IdempotencyObserver NONE = new IdempotencyObserver() {
        @Override
        public <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation)
                throws E {
            return invocation.proceed();
        }
    };

    /**
     * Runs one call.
     *
     * @param operation  the operation being called
     * @param invocation the call: {@link Invocation#proceed()} it once
     * @return what {@code invocation.proceed()} returned
     * @throws E what {@code invocation.proceed()} threw
     */
    <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation) throws E;

    /** One idempotent call, wrapped by an {@link IdempotencyObserver}. */
    interface Invocation<T, E extends Throwable> {

        /** Runs the call: claim, then execution or replay; the action's own exception passes through. */
        T proceed() throws E;

        /**
         * The outcome published for this call, once {@link #proceed()} has returned or thrown; empty before, and
         * empty if the call ended in an error no outcome was published for (a {@link Error} from the store).
         */
        Optional<IdempotencyEvent.Outcome> outcome();
    }
}
