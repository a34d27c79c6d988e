package dev.idempotency.metrics;

import dev.idempotency.store.Backlog;
import dev.idempotency.store.IdempotencyStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Gauges of what waits for an operator, per operation, from {@link IdempotencyStore#backlog(Instant)}:
 * <ul>
 *   <li>{@value #NEEDS_REVIEW} (gauge, tag {@code operation}): {@code NEEDS_REVIEW} records held;</li>
 *   <li>{@value #NEEDS_REVIEW_OLDEST} (time gauge, seconds, tag {@code operation}): the age of the oldest of them
 *       (since it was claimed), 0 when there is none;</li>
 *   <li>{@value #STUCK} (gauge, tag {@code operation}): {@code IN_FLIGHT} claims past their lease;</li>
 *   <li>{@value #STUCK_OLDEST} (time gauge, seconds, tag {@code operation}): how long the longest stuck of them has
 *       been past its lease, 0 when there is none;</li>
 *   <li>{@value #REFRESH_FAILURES} (counter): refreshes whose query failed (the gauges keep their last values).</li>
 * </ul>
 * A scrape never queries the store: the counts come from the last {@link #refresh()}, which the application runs on
 * a schedule (it is a {@link Runnable}; the Boot auto-configuration runs it every
 * {@code idempotency.metrics.backlog-interval}); the ages are computed from the instants it read and the clock at
 * scrape time. One refresh is one indexed query of the store's (the JDBC store's index on the status), whatever the
 * table's size. An operation is tagged once it has had a backlog, and reads 0 once that is cleared.
 */
public final class MicrometerBacklogGauges implements Runnable {

    /** The name of the gauge of {@code NEEDS_REVIEW} records. */
    public static final String NEEDS_REVIEW = "idempotency.backlog.needs_review";
    /** The name of the time gauge of the oldest {@code NEEDS_REVIEW} record's age. */
    public static final String NEEDS_REVIEW_OLDEST = "idempotency.backlog.needs_review.oldest";
    /** The name of the gauge of claims stuck past their lease. */
    public static final String STUCK = "idempotency.backlog.stuck";
    /** The name of the time gauge of how long the longest stuck claim has been past its lease. */
    public static final String STUCK_OLDEST = "idempotency.backlog.stuck.oldest";
    /** The name of the counter of failed refreshes. */
    public static final String REFRESH_FAILURES = "idempotency.backlog.refresh.failures";

    private static final System.Logger LOG = System.getLogger(MicrometerBacklogGauges.class.getName());

    private final IdempotencyStore store;
    private final MeterRegistry registry;
    private final Clock clock;
    private final Counter failures;
    private final Map<String, Holder> byOperation = new ConcurrentHashMap<>();

    /** The last figures of one operation, read by its gauges. */
    private static final class Holder {
        volatile Backlog backlog;

        Holder(Backlog backlog) {
            this.backlog = backlog;
        }
    }

    /**
     * @param store    the store whose backlog is counted (the executor's, pre-filters included: they forward it)
     * @param registry where the gauges go
     * @param clock    the executor's clock: what "stuck" and the ages are measured by
     */
    public MicrometerBacklogGauges(IdempotencyStore store, MeterRegistry registry, Clock clock) {
        this.store = Objects.requireNonNull(store, "store");
        this.registry = Objects.requireNonNull(registry, "registry");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.failures = Counter.builder(REFRESH_FAILURES)
                .description("Refreshes of the idempotency backlog gauges whose store query failed")
                .register(registry);
    }

    /**
     * Reads the backlog from the store (one query) and updates the gauges.
     *
     * @return the backlog read, or null if the store failed or cannot count by status (counted, logged)
     */
    public @Nullable List<Backlog> refresh() {
        List<Backlog> backlog;
        try {
            backlog = store.backlog(clock.instant().truncatedTo(ChronoUnit.MILLIS));
        } catch (RuntimeException e) {
            failures.increment();
            LOG.log(System.Logger.Level.WARNING, "the idempotency backlog gauges could not be refreshed; they keep"
                    + " their last values: " + e);
            return null;
        }
        Set<String> seen = new HashSet<>();
        for (Backlog b : backlog) {
            seen.add(b.operation());
            holder(b.operation()).backlog = b;
        }
        byOperation.forEach((operation, holder) -> {
            if (!seen.contains(operation)) {
                holder.backlog = Backlog.empty(operation);
            }
        });
        return backlog;
    }

    /** {@link #refresh()}, for schedulers. */
    @Override
    public void run() {
        refresh();
    }

    private Holder holder(String operation) {
        return byOperation.computeIfAbsent(operation, op -> {
            Holder h = new Holder(Backlog.empty(op));
            Gauge.builder(NEEDS_REVIEW, h, x -> x.backlog.needsReview()).tag("operation", op)
                    .description("NEEDS_REVIEW idempotency records: irreversible calls whose outcome awaits an operator")
                    .register(registry);
            TimeGauge.builder(NEEDS_REVIEW_OLDEST, h, TimeUnit.SECONDS, x -> age(x.backlog.oldestNeedsReview()))
                    .tag("operation", op).description("Age of the oldest NEEDS_REVIEW idempotency record")
                    .register(registry);
            Gauge.builder(STUCK, h, x -> x.backlog.stuck()).tag("operation", op)
                    .description("In-flight idempotency claims past their lease: crashed or hanging attempts")
                    .register(registry);
            TimeGauge.builder(STUCK_OLDEST, h, TimeUnit.SECONDS, x -> age(x.backlog.oldestStuckLease()))
                    .tag("operation", op).description("How long the longest stuck idempotency claim is past its lease")
                    .register(registry);
            return h;
        });
    }

    private double age(@Nullable Instant since) {
        if (since == null) {
            return 0;
        }
        return Math.max(0, Duration.between(since, clock.instant()).toMillis() / 1000.0);
    }
}
