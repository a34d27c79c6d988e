package dev.idempotency.metrics;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Objects;

/**
 * Counts idempotent calls and times their store claims in a Micrometer {@link MeterRegistry}:
 * <ul>
 *   <li>{@value #CALLS} (counter), tags {@code operation}, {@code tier} ({@code reversible}, {@code irreversible})
 *       and {@code outcome} (the {@link IdempotencyEvent.Outcome#tagValue() tag value} of each outcome:
 *       {@code executed}, {@code replayed}, {@code replayed_cached}, {@code in_progress}, {@code key_reused},
 *       {@code outcome_unknown}, {@code failed}, {@code confirmation_required});</li>
 *   <li>{@value #CLAIM} (timer), tag {@code operation}: how long the call took to claim its key, from its start to
 *       the first answer of the store (or of a pre-filter in front of it: those are the fast ones, counted as
 *       {@code replayed_cached}); not recorded for calls refused before claiming (a bad key).</li>
 * </ul>
 * Register it with {@code IdempotentExecutor.builder(store).listener(new MicrometerIdempotencyListener(registry))}.
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener {

    /** The name of the call counter. */
    public static final String CALLS = "idempotency.calls";
    /** The name of the claim timer. */
    public static final String CLAIM = "idempotency.claim";

    private final Meter.MeterProvider<Counter> calls;
    private final Meter.MeterProvider<Timer> claims;

    public MicrometerIdempotencyListener(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        this.calls = Counter.builder(CALLS)
                .description("Idempotent calls, by operation, tier and outcome")
                .withRegistry(registry);
        this.claims = Timer.builder(CLAIM)
                .description("Time to claim an idempotency key in the store")
                .withRegistry(registry);
    }

    @Override
    public void onEvent(IdempotencyEvent event) {
        calls.withTags(Tags.of(
                "operation", event.operation(),
                "tier", event.tier().name().toLowerCase(Locale.ROOT),
                "outcome", event.outcome().tagValue())).increment();
        if (!event.claimTime().isZero()) {
            claims.withTags(Tags.of("operation", event.operation())).record(event.claimTime());
        }
    }
}
