package dev.idempotency.spring.boot;

import dev.idempotency.metrics.MicrometerBacklogGauges;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * Refreshes the backlog gauges ({@link MicrometerBacklogGauges}: one indexed query of the store's) every
 * {@code idempotency.backlog.interval}, so that a scrape never queries the store.
 */
final class IdempotencyBacklogScheduler extends FixedDelaySchedule {

    private final MicrometerBacklogGauges gauges;

    IdempotencyBacklogScheduler(MicrometerBacklogGauges gauges, @Nullable TaskScheduler scheduler, Duration interval) {
        super("idempotency-backlog-", scheduler, interval, "idempotency.backlog.interval");
        this.gauges = gauges;
    }

    @Override
    void runOnce() {
        gauges.refresh(); // a failure is counted and logged by the gauges; never thrown
    }

    /** The first refresh comes at once: the gauges should not read zero for a minute after startup. */
    @Override
    Duration firstRun() {
        return Duration.ZERO;
    }
}
