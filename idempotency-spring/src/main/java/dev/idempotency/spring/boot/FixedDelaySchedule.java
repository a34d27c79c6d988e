package dev.idempotency.spring.boot;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * A piece of store maintenance run with fixed delays on the application's {@link TaskScheduler}, or on a scheduler
 * of its own (one daemon thread) when the application has none, from start to stop of the application context. The
 * first run comes after a minute, or one interval if that is shorter.
 */
abstract class FixedDelaySchedule implements SmartLifecycle {

    private static final Duration FIRST_RUN = Duration.ofMinutes(1);

    private final String threadNamePrefix;
    private final @Nullable TaskScheduler scheduler;
    private final Duration interval;
    private @Nullable ThreadPoolTaskScheduler own;
    private volatile @Nullable ScheduledFuture<?> scheduled;

    FixedDelaySchedule(String threadNamePrefix, @Nullable TaskScheduler scheduler, Duration interval,
            String property) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, was " + interval);
        }
        this.threadNamePrefix = threadNamePrefix;
        this.scheduler = scheduler;
        this.interval = interval;
    }

    /** One run; it must not throw (a failure is logged or counted, and the next run comes as planned). */
    abstract void runOnce();

    Duration interval() {
        return interval;
    }

    /** The delay before the first run: a minute, or one interval if that is shorter. */
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
            mine.setThreadNamePrefix(threadNamePrefix);
            mine.setDaemon(true);
            mine.initialize();
            own = mine;
            target = mine;
        }
        scheduled = target.scheduleWithFixedDelay(this::runOnce, target.getClock().instant().plus(firstRun()),
                interval);
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
