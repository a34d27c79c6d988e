package dev.idempotency.benchmarks.load;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * An open-loop load generator: request {@code i} is due at {@code start + i / rate}, whatever the answers to the
 * requests before it, and its latency is measured from that intended start, not from when it was actually sent. A
 * server that stalls, or a generator whose workers are all waiting on it, therefore shows in the latencies of every
 * request that should have been sent meanwhile (the "coordinated omission" a closed loop hides: one slow answer and
 * no requests during it). One pacer thread hands each request to a pool of workers at its time; when every worker is
 * busy, the request waits in the queue and that wait is part of its latency.
 */
final class OpenLoop {

    /** What one request does: blocks until its answer, throws when the answer is a failure. */
    @FunctionalInterface
    interface Target {
        void call(long sequence) throws Exception;
    }

    /** Latencies are recorded in microseconds, up to this (larger ones are recorded as this). */
    static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(5);

    private final int workers;
    private final Duration giveUp;

    /**
     * @param workers how many requests may be in flight at once (the rest wait, counted, in the generator's queue)
     * @param giveUp  a request still waiting for a worker this long after its intended start is not sent, and counts
     *                as a failure at that latency (a client's timeout), so that an overload ends
     */
    OpenLoop(int workers, Duration giveUp) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be at least 1, was " + workers);
        }
        this.workers = workers;
        this.giveUp = giveUp;
    }

    /**
     * Sends {@code rate × (head + measured)} requests at a fixed rate and waits for every answer. The requests due in
     * the first {@code head} are sent but not recorded (the step's own ramp, after the previous step's drain).
     */
    Result run(Target target, double ratePerSecond, Duration head, Duration measured) {
        return run(target, ratePerSecond, head, measured, sequence -> false);
    }

    /**
     * The same, and the latencies of the requests {@code repeat} names (a client's retries) also in a histogram of
     * their own, {@link Result#repeats()}.
     */
    Result run(Target target, double ratePerSecond, Duration head, Duration measured, LongPredicate repeat) {
        if (!(ratePerSecond > 0)) {
            throw new IllegalArgumentException("the rate must be positive, was " + ratePerSecond);
        }
        double periodNanos = 1e9 / ratePerSecond;
        long skipped = Math.round(head.toNanos() / periodNanos);
        long total = skipped + Math.round(measured.toNanos() / periodNanos);
        ConcurrentHistogram latencies = new ConcurrentHistogram(HIGHEST_MICROS, 3);
        ConcurrentHistogram repeats = new ConcurrentHistogram(HIGHEST_MICROS, 3);
        LongAdder failures = new LongAdder();
        LongAdder notSent = new LongAdder();
        ConcurrentMap<String, LongAdder> failureKinds = new ConcurrentHashMap<>();
        AtomicLong maxPacerLateNanos = new AtomicLong();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(workers, workers, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "open-loop-worker");
                    t.setDaemon(true);
                    return t;
                });
        long giveUpNanos = giveUp.toNanos();
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        try {
            for (long i = 0; i < total; i++) {
                long intended = start + Math.round(i * periodNanos);
                long now;
                while ((now = System.nanoTime()) < intended) {
                    LockSupport.parkNanos(intended - now);
                }
                maxPacerLateNanos.accumulateAndGet(now - intended, Math::max);
                long sequence = i;
                boolean record = i >= skipped;
                pool.execute(() -> {
                    boolean failed = false;
                    if (System.nanoTime() - intended > giveUpNanos) {
                        failed = true;
                        notSent.increment();
                        failureKinds.computeIfAbsent("not sent: waited past " + giveUp.toMillis() + " ms",
                                k -> new LongAdder()).increment();
                    } else {
                        try {
                            target.call(sequence);
                        } catch (Exception e) {
                            failed = true;
                            failureKinds.computeIfAbsent(kind(e), k -> new LongAdder()).increment();
                        }
                    }
                    long latencyMicros = (System.nanoTime() - intended) / 1_000;
                    if (record) {
                        long value = Math.min(Math.max(latencyMicros, 0), HIGHEST_MICROS);
                        latencies.recordValue(value);
                        if (repeat.test(sequence)) {
                            repeats.recordValue(value);
                        }
                        if (failed) {
                            failures.increment();
                        }
                    }
                });
            }
        } finally {
            pool.shutdown();
        }
        try {
            // every request ends within giveUp of its intended start plus the target's own timeout
            if (!pool.awaitTermination(giveUpNanos + TimeUnit.MINUTES.toNanos(2), TimeUnit.NANOSECONDS)) {
                pool.shutdownNow();
                throw new IllegalStateException("requests still unanswered 2 min after the give-up time");
            }
        } catch (InterruptedException e) {
            pool.shutdownNow();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the answers", e);
        }
        Map<String, Long> kinds = new TreeMap<>();
        failureKinds.forEach((k, v) -> kinds.put(k, v.sum()));
        return new Result(ratePerSecond, total - skipped, latencies.copy(), repeats.copy(), failures.sum(),
                notSent.sum(), kinds,
                maxPacerLateNanos.get());
    }

    private static String kind(Throwable e) {
        String message = e.getMessage();
        String kind = e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        return kind.length() > 120 ? kind.substring(0, 120) + "..." : kind;
    }

    /**
     * What one run measured.
     *
     * @param rate             the requests per second scheduled
     * @param recorded         the requests scheduled in the measured part (each one recorded, answered or not)
     * @param latencies        their latencies from the intended start, microseconds, failures included
     * @param repeats          of those, the latencies of the requests named as repeats (none unless asked)
     * @param failures         how many of them failed (an error answer, a timeout, not sent)
     * @param notSent          of all the run's requests, those given up on before a worker was free
     * @param failureKinds     every failure of the run by exception and message
     * @param maxPacerLateNanos how late the pacer handed out its most late request (its own scheduling delay)
     */
    record Result(double rate, long recorded, Histogram latencies, Histogram repeats, long failures, long notSent,
            Map<String, Long> failureKinds, long maxPacerLateNanos) {

        /** The latency at a percentile (0 to 100), milliseconds. */
        double millis(double percentile) {
            return latencies.getValueAtPercentile(percentile) / 1000.0;
        }

        /** The latencies of the requests that are not repeats (the first attempts). */
        Histogram firsts() {
            Histogram firsts = latencies.copy();
            firsts.subtract(repeats);
            return firsts;
        }
    }
}
