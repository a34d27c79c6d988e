package dev.idempotency;

import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Keeps one committed claim alive: renews its lease every third of the lease, from one small scheduler shared by
 * every executor, while the method runs and, inside a caller's transaction, until that transaction ends. A process
 * that dies stops renewing, so its claim still goes stale one lease later: the lease bounds how long a crash goes
 * unnoticed, not how long a method may run (ShedLock's {@code KeepAliveLockProvider} works the same way).
 *
 * <p>The lease also identifies the claim ({@link IdempotencyStore#complete} and friends are conditional on it), so
 * {@link #stop()} waits for a renewal under way and returns the lease the store holds now: the owner then finishes
 * with the right one. Renewals run on the scheduler's thread, where no caller's transaction is visible: each commits
 * on its own.
 */
final class LeaseKeeper {

    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());

    /** Two daemon threads for every executor of the JVM: a renewal is one short conditional UPDATE. */
    private static final ScheduledExecutorService SCHEDULER = scheduler();

    private final IdempotencyStore store;
    private final Clock clock;
    private final byte[] keyHash;
    private final Duration lease;
    private final String description;
    private Instant current;
    private boolean stopped;
    private boolean lost;
    private @Nullable ScheduledFuture<?> task;

    private LeaseKeeper(IdempotencyStore store, Clock clock, byte[] keyHash, Instant leaseUntil, Duration lease,
            String description) {
        this.store = store;
        this.clock = clock;
        this.keyHash = keyHash;
        this.lease = lease;
        this.current = leaseUntil;
        this.description = description;
    }

    /** Starts renewing the claim identified by {@code leaseUntil} every third of {@code lease}. */
    static LeaseKeeper start(IdempotencyStore store, Clock clock, byte[] keyHash, Instant leaseUntil, Duration lease,
            String description) {
        LeaseKeeper keeper = new LeaseKeeper(store, clock, keyHash, leaseUntil, lease, description);
        long period = Math.max(1, lease.toMillis() / 3);
        synchronized (keeper) {
            keeper.task = SCHEDULER.scheduleWithFixedDelay(keeper::renew, period, period, TimeUnit.MILLISECONDS);
        }
        return keeper;
    }

    private synchronized void renew() {
        if (stopped) {
            return;
        }
        Instant next = clock.instant().plus(lease).truncatedTo(ChronoUnit.MILLIS);
        if (!next.isAfter(current)) {
            return;
        }
        try {
            if (store.renew(keyHash, current, next)) {
                current = next;
            } else {
                // taken over or evicted: the owner learns it when it records (the conditional write finds nothing)
                lost = true;
                stopRenewing();
                LOG.log(System.Logger.Level.WARNING, "the claim of " + description + " could not be renewed: it was"
                        + " taken over or evicted while the call ran");
            }
        } catch (RuntimeException e) {
            // a passing store failure: the next tick tries again while the lease still holds
            LOG.log(System.Logger.Level.WARNING, "could not renew the lease of " + description + " (until " + current
                    + "); trying again", e);
        }
    }

    /** Stops renewing (waiting for a renewal under way) and returns the lease that identifies the claim now. */
    synchronized Instant stop() {
        stopRenewing();
        return current;
    }

    /** Whether a renewal found the claim gone. */
    synchronized boolean lost() {
        return lost;
    }

    private void stopRenewing() {
        stopped = true;
        if (task != null) {
            task.cancel(false);
        }
    }

    private static ScheduledExecutorService scheduler() {
        AtomicInteger n = new AtomicInteger();
        ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "idempotency-lease-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        s.setRemoveOnCancelPolicy(true);
        return s;
    }
}
