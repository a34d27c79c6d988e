package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

/**
 * Teaches a Spring Kafka {@link DefaultErrorHandler} what an {@link IdempotentListenerAdvice} throws. Kafka has no
 * per-record requeue: the error handler seeks back to a failed record and delivers it again after its back-off, and
 * gives it to its recoverer (a dead-letter topic) once the back-off is spent.
 * <ul>
 *   <li>{@link IdempotencyInProgressException} (the first delivery of the key still runs, on a consumer that lost the
 *       partition in a rebalance): delivered again every {@code inFlightInterval} without limit, never recovered:
 *       once the first delivery ends, the record is acknowledged as done, or runs if the first rolled back;</li>
 *   <li>{@link IdempotencyKeyException}, {@link IdempotencyKeyReusedException} (a record under a known key with
 *       another payload) and {@link IdempotencyOutcomeUnknownException}: not retryable, straight to the recoverer
 *       (a {@code DeadLetterPublishingRecoverer} writes the exception's message, the reason, in the record's
 *       headers);</li>
 *   <li>anything the listener throws: the handler's own back-off and recoverer, as without the advice.</li>
 * </ul>
 */
public final class IdempotentKafkaErrorHandling {

    /** How often a record whose first delivery is still running is tried again, unless given. */
    public static final Duration DEFAULT_IN_FLIGHT_INTERVAL = Duration.ofSeconds(1);

    private IdempotentKafkaErrorHandling() {
    }

    /** {@link #configure(DefaultErrorHandler, Duration)} with {@link #DEFAULT_IN_FLIGHT_INTERVAL}. */
    public static DefaultErrorHandler configure(DefaultErrorHandler handler) {
        return configure(handler, DEFAULT_IN_FLIGHT_INTERVAL);
    }

    /**
     * Configures {@code handler} as the class comment says. It replaces the handler's back-off function, if one was
     * set.
     *
     * @return {@code handler}
     */
    public static DefaultErrorHandler configure(DefaultErrorHandler handler, Duration inFlightInterval) {
        Objects.requireNonNull(handler, "handler");
        FixedBackOff inFlight = new FixedBackOff(inFlightInterval.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
        handler.addNotRetryableExceptions(IdempotencyKeyException.class, IdempotencyKeyReusedException.class,
                IdempotencyOutcomeUnknownException.class);
        // null: the handler's own back-off
        handler.setBackOffFunction((record, e) -> inFlight(e) ? inFlight : null);
        return handler;
    }

    private static boolean inFlight(@Nullable Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IdempotencyException i && i.kind() == IdempotencyException.Kind.IN_PROGRESS) {
                return true;
            }
        }
        return false;
    }
}
