package dev.idempotency.spring.boot;

import dev.idempotency.jdbc.JdbcPurgeJob;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.scheduling.TaskScheduler;

/**
 * Runs a {@link JdbcPurgeJob} with fixed delays ({@link FixedDelaySchedule}). Logs what each run removed, and tells
 * the {@link Observer} (the purge meters, with Micrometer); a failed run is logged and the next one runs as planned.
 */
final class IdempotencyPurgeScheduler extends FixedDelaySchedule {

    private static final Log LOG = LogFactory.getLog(IdempotencyPurgeScheduler.class);

    /** Told how each run went: what it deleted, when it ended, and its failure if it failed. */
    @FunctionalInterface
    interface Observer {
        void purged(long deleted, Instant finishedAt, @Nullable Throwable failure);
    }

    private final JdbcPurgeJob job;
    private final String storeName;
    private final Clock clock;
    private final Observer observer;

    IdempotencyPurgeScheduler(JdbcPurgeJob job, String storeName, @Nullable TaskScheduler scheduler,
            Duration interval) {
        this(job, storeName, scheduler, interval, Clock.systemUTC(), (deleted, at, failure) -> { });
    }

    IdempotencyPurgeScheduler(JdbcPurgeJob job, String storeName, @Nullable TaskScheduler scheduler,
            Duration interval, Clock clock, Observer observer) {
        super("idempotency-purge-", scheduler, interval, "idempotency.purge.interval");
        this.job = job;
        this.storeName = storeName;
        this.clock = clock;
        this.observer = observer;
    }

    /** One purge, now: how many expired records it deleted, or -1 if it failed (logged). */
    long purge() {
        try {
            long removed = job.purge();
            if (removed > 0) {
                LOG.info("Purged " + removed + " expired idempotency record" + (removed == 1 ? "" : "s") + " from "
                        + storeName);
            } else if (LOG.isDebugEnabled()) {
                LOG.debug("No expired idempotency records to purge from " + storeName);
            }
            observer.purged(removed, clock.instant(), null);
            return removed;
        } catch (RuntimeException e) {
            LOG.warn("Purging expired idempotency records from " + storeName + " failed; next try in " + interval(),
                    e);
            observer.purged(0, clock.instant(), e);
            return -1;
        }
    }

    @Override
    void runOnce() {
        purge();
    }
}
