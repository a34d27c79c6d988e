package dev.idempotency.spring.boot;

import dev.idempotency.jdbc.JdbcPurgeJob;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Runs a {@link JdbcPurgeJob} with fixed delays on the application's {@link TaskScheduler}, or on a scheduler of its
 * own (one daemon thread) when the application has none, from start to stop of the application context. Logs what
 * each run removed; a failed run is logged and the next one runs as planned.
 */
final class IdempotencyPurgeScheduler implements SmartLifecycle {

    private static final Log LOG = LogFactory.getLog(IdempotencyPurgeScheduler.class);
    private static final Duration FIRST_RUN = Duration.ofMinutes(1);

    private final JdbcPurgeJob job;
    private final String storeName;
    private final @Nullable TaskScheduler scheduler;
    private final Duration interval;
    private @Nullable ThreadPoolTaskScheduler own;
    private volatile @Nullable ScheduledFuture<?> scheduled;

    IdempotencyPurgeScheduler(JdbcPurgeJob job, String storeName, @Nullable TaskScheduler scheduler,
            Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("idempotency.purge.interval must be positive, was " + interval);
        }
        this.job = job;
        this.storeName = storeName;
        this.scheduler = scheduler;
        this.interval = interval;
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
            return removed;
        } catch (RuntimeException e) {
            LOG.warn("Purging expired idempotency records from " + storeName + " failed; next try in " + interval, e);
            return -1;
        }
    }

    Duration interval() {
        return interval;
    }

    /** The delay before the first purge: a minute, or one interval if that is shorter. */
    Duration firstRun() {
        return FIRST_RUN.compareTo(interval) < 0 ? FIRST_RUN : interval;
    }

    @Override
    public synchronized void start() {
        if (scheduled != null) {
            return;
        }
        TaskScheduler target = scheduler;
        if (target == null) {
            ThreadPoolTaskScheduler mine = new ThreadPoolTaskScheduler();
            mine.setThreadNamePrefix("idempotency-purge-");
            mine.setDaemon(true);
            mine.initialize();
            own = mine;
            target = mine;
        }
        scheduled = target.scheduleWithFixedDelay(this::purge, target.getClock().instant().plus(firstRun()), interval);
    }

    @Override
    public synchronized void stop() {
        ScheduledFuture<?> s = scheduled;
        if (s != null) {
            s.cancel(false);
            scheduled = null;
        }
        if (own != null) {
            own.shutdown();
            own = null;
        }
    }

    @Override
    public boolean isRunning() {
        return scheduled != null;
    }
}
