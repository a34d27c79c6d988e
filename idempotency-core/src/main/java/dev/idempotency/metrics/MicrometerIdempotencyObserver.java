package dev.idempotency.metrics;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyObserver;
import dev.idempotency.IdempotentOperation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Objects;

/**
 * Opens a Micrometer {@link Observation} named {@value #NAME} around each idempotent call, so that tracing sees it
 * as a span (and, with a meter handler, as a timer): low-cardinality keys {@code operation}, {@code tier} and, once
 * known, {@code outcome} (as in {@link MicrometerIdempotencyListener}; {@code failed} when the call ended in an error
 * that published no outcome); an exception that leaves the call is recorded as the observation's error. The key
 * itself is not added: keys are business identifiers a trace backend should not necessarily keep.
 *
 * <p>Set it with {@code IdempotentExecutor.builder(store).observer(new MicrometerIdempotencyObserver(registry))}.
 */
public final class MicrometerIdempotencyObserver implements IdempotencyObserver {

    /** The name of the observation. */
    public static final String NAME = "idempotency.call";

    private final ObservationRegistry registry;

    public MicrometerIdempotencyObserver(ObservationRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    @SuppressWarnings("try") // the scope only makes the observation current while the call runs
    public <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation) throws E {
        Observation observation = Observation.createNotStarted(NAME, registry)
                .contextualName("idempotency " + operation.name())
                .lowCardinalityKeyValue("operation", operation.name())
                .lowCardinalityKeyValue("tier", operation.tier().name().toLowerCase(Locale.ROOT))
                .start();
        try (Observation.Scope scope = observation.openScope()) {
            return invocation.proceed();
        } catch (Throwable t) {
            observation.error(t);
            throw t;
        } finally {
            observation.lowCardinalityKeyValue("outcome",
                    invocation.outcome().map(IdempotencyEvent.Outcome::tagValue).orElse("failed"));
            observation.stop();
        }
    }
}
