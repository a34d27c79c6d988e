package dev.idempotency.metrics;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.store.CircuitBreakerStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Counts idempotent calls and times their store claims in a Micrometer {@link MeterRegistry}:
 * <ul>
 *   <li>{@value #CALLS} (counter), tags {@code operation}, {@code tier} ({@code reversible}, {@code irreversible})
 *       and {@code outcome} (the {@link IdempotencyEvent.Outcome#tagValue() tag value} of each outcome:
 *       {@code executed}, {@code replayed}, {@code replayed_cached}, {@code in_progress}, {@code key_reused},
 *       {@code outcome_unknown}, {@code failed}, {@code rolled_back}, {@code confirmation_required},
 *       {@code unguarded});</li>
 *   <li>{@value #CLAIM} (timer), tag {@code operation}: how long the call took to claim its key, from its start to
 *       the first answer of the store (or of a pre-filter in front of it: those are the fast ones, counted as
 *       {@code replayed_cached}); not recorded for calls refused before claiming (a bad key).</li>
 *   <li>{@value #DUPLICATES} (counter), tags {@code operation} and {@code outcome}: the calls that met an earlier
 *       call of their key and did not run, as {@code replayed} (its outcome returned, from the store or a pre-filter),
 *       {@code refused} (the key was used with other arguments, or its outcome awaits review) and {@code in_flight}
 *       (the earlier attempt still ran past the lock timeout): how often the guard fired;</li>
 *   <li>{@value #PURGE_DELETED} (counter) and {@value #PURGE_RUNS} (counter, tag {@code result}: {@code success},
 *       {@code failure}): what each purge of expired records removed, when {@link #purged} is told (the Boot purge
 *       scheduler does), and {@value #PURGE_LAST_SUCCESS} (gauge): the epoch second of the last successful purge;</li>
 *   <li>{@value #CIRCUIT_STATE} (gauge): the state of the store's circuit, 0 closed, 1 half open, 2 open, and
 *       {@value #CIRCUIT_TRANSITIONS} (counter), tag {@code state} ({@code closed}, {@code open}, {@code half_open}):
 *       each state entered; only when it is also given to {@link CircuitBreakerStore.Builder#listener}.</li>
 * </ul>
 * Register it with {@code IdempotentExecutor.builder(store).listener(new MicrometerIdempotencyListener(registry))}
 * (and the same instance with {@code CircuitBreakerStore.wrap(store).listener(...)} if there is a breaker).
 */
public final class MicrometerIdempotencyListener implements IdempotencyListener, CircuitBreakerStore.Listener {

    /** The name of the call counter. */
    public static final String CALLS = "idempotency.calls";
    /** The name of the claim timer. */
    public static final String CLAIM = "idempotency.claim";
    /** The name of the duplicates counter. */
    public static final String DUPLICATES = "idempotency.duplicates";
    /** The name of the counter of records purged. */
    public static final String PURGE_DELETED = "idempotency.purge.deleted";
    /** The name of the counter of purge runs. */
    public static final String PURGE_RUNS = "idempotency.purge.runs";
    /** The name of the gauge of the last successful purge (epoch seconds). */
    public static final String PURGE_LAST_SUCCESS = "idempotency.purge.last.success";
    /** The name of the circuit state gauge. */
    public static final String CIRCUIT_STATE = "idempotency.store.circuit.state";
    /** The name of the circuit transition counter. */
    public static final String CIRCUIT_TRANSITIONS = "idempotency.store.circuit.transitions";

    private final Meter.MeterProvider<Counter> calls;
    private final Meter.MeterProvider<Timer> claims;
    private final Meter.MeterProvider<Counter> duplicates;
    private final java.util.concurrent.atomic.AtomicLong lastPurge = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean purgeRegistered;
    private final MeterRegistry registry;
    private final AtomicInteger circuit = new AtomicInteger();
    private volatile boolean circuitRegistered;

    public MicrometerIdempotencyListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.calls = Counter.builder(CALLS)
                .description("Idempotent calls, by operation, tier and outcome")
                .withRegistry(registry);
        this.claims = Timer.builder(CLAIM)
                .description("Time to claim an idempotency key in the store")
                .withRegistry(registry);
        this.duplicates = Counter.builder(DUPLICATES)
                .description("Calls that met an earlier call of their key and did not run, by operation and outcome")
                .withRegistry(registry);
    }

    @Override
    public void onEvent(IdempotencyEvent event) {
        calls.withTags(Tags.of(
                "operation", event.operation(),
                "tier", event.tier().name().toLowerCase(Locale.ROOT),
                "outcome", event.outcome().tagValue())).increment();
        String duplicate = switch (event.outcome()) {
            case REPLAYED, REPLAYED_CACHED -> "replayed";
            case KEY_REUSED, OUTCOME_UNKNOWN -> "refused";
            case IN_PROGRESS -> "in_flight";
            default -> null;
        };
        if (duplicate != null) {
            duplicates.withTags(Tags.of("operation", event.operation(), "outcome", duplicate)).increment();
        }
        if (!event.claimTime().isZero()) {
            claims.withTags(Tags.of("operation", event.operation())).record(event.claimTime());
        }
    }

    /**
     * Counts one purge run: how many expired records it deleted, or that it failed ({@code failure} non-null; then
     * {@code deleted} is what it deleted before failing).
     *
     * @param finishedAt when the run ended (the last-success gauge, for a successful run)
     */
    public void purged(long deleted, java.time.Instant finishedAt, @Nullable Throwable failure) {
        if (!purgeRegistered) {
            synchronized (this) {
                if (!purgeRegistered) {
                    io.micrometer.core.instrument.Gauge.builder(PURGE_LAST_SUCCESS, lastPurge,
                            java.util.concurrent.atomic.AtomicLong::get)
                            .description("When the last purge of expired idempotency records succeeded, in epoch"
                                    + " seconds (0: none yet)")
                            .register(registry);
                    purgeRegistered = true;
                }
            }
        }
        if (deleted > 0) {
            Counter.builder(PURGE_DELETED).description("Expired idempotency records deleted by the purge")
                    .register(registry).increment(deleted);
        }
        Counter.builder(PURGE_RUNS).description("Purges of expired idempotency records, by result")
                .tag("result", failure == null ? "success" : "failure").register(registry).increment();
        if (failure == null) {
            lastPurge.set(finishedAt.getEpochSecond());
        }
    }

    @Override
    public void onStateChange(CircuitBreakerStore.State from, CircuitBreakerStore.State to,
            @Nullable Throwable cause) {
        if (!circuitRegistered) {
            synchronized (this) {
                if (!circuitRegistered) {
                    io.micrometer.core.instrument.Gauge.builder(CIRCUIT_STATE, circuit, AtomicInteger::get)
                            .description("The idempotency store's circuit: 0 closed, 1 half open, 2 open")
                            .register(registry);
                    circuitRegistered = true;
                }
            }
        }
        circuit.set(switch (to) {
            case CLOSED -> 0;
            case HALF_OPEN -> 1;
            case OPEN -> 2;
        });
        Counter.builder(CIRCUIT_TRANSITIONS).description("States entered by the idempotency store's circuit")
                .tag("state", to.name().toLowerCase(Locale.ROOT)).register(registry).increment();
    }
}
