package dev.idempotency.jdbc;

import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Deletes expired completed records in bounded batches until none is left: give it to a scheduler (the Spring Boot
 * auto-configuration does) or call {@link #purge()} from a cron job. Each batch is one short statement that commits on
 * its own, so a purge never holds many locks for long. Safe to run on several nodes at once: each batch takes rows no
 * other node is deleting (PostgreSQL: {@code FOR UPDATE SKIP LOCKED}), and never touches an {@code IN_FLIGHT} or
 * {@code NEEDS_REVIEW} record. The JDBC store deletes only what expired by the database's clock too, so a node whose
 * clock runs ahead never purges a live outcome.
 *
 * <p>Works with any {@link IdempotencyStore}: it only calls {@link IdempotencyStore#purgeExpired(Instant, int)}.
 *
 * <p>Given the store's {@link JdbcIdempotencyAudit} (a {@link JdbcIdempotencyStore}'s), it then deletes the audit's
 * attempt rows of keys whose record is gone (expired and purged, or released by an operator), in batches of the
 * same size: they told how a key got into trouble, and the key is over. The resolutions are kept: they are the
 * record of who decided what.
 */
public final class JdbcPurgeJob implements Runnable {

    /** Rows deleted per statement unless set otherwise. */
    public static final int DEFAULT_BATCH_SIZE = 500;

    private final IdempotencyStore store;
    private final Clock clock;
    private final int batchSize;
    private final @Nullable JdbcIdempotencyAudit audit;
    private final @Nullable String storeTable;

    /** A job purging {@code store} by the system UTC clock, {@value #DEFAULT_BATCH_SIZE} rows per batch. */
    public JdbcPurgeJob(IdempotencyStore store) {
        this(store, Clock.systemUTC(), DEFAULT_BATCH_SIZE);
    }

    /**
     * @param store     the store to purge
     * @param clock     what "now" is: records that expired at or before it are deleted
     * @param batchSize rows per statement, positive
     */
    public JdbcPurgeJob(IdempotencyStore store, Clock clock, int batchSize) {
        this(store, clock, batchSize, null);
    }

    /**
     * @param store     the store to purge
     * @param clock     what "now" is: records that expired at or before it are deleted
     * @param batchSize rows per statement, positive
     * @param audit     the store's audit, whose attempt rows of keys without a record are deleted after each purge;
     *                  null for none
     * @throws IllegalArgumentException if an audit is given with a store that is not a {@link JdbcIdempotencyStore}
     */
    public JdbcPurgeJob(IdempotencyStore store, Clock clock, int batchSize, @Nullable JdbcIdempotencyAudit audit) {
        this.store = Objects.requireNonNull(store, "store");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (batchSize <= 0) {
            throw new IllegalArgumentException("JdbcPurgeJob: batchSize must be positive, was " + batchSize);
        }
        this.batchSize = batchSize;
        if (audit != null && !(store instanceof JdbcIdempotencyStore)) {
            throw new IllegalArgumentException("JdbcPurgeJob: the audit " + audit + " purges its attempts against a"
                    + " JdbcIdempotencyStore's table, and " + store + " is none");
        }
        this.audit = audit;
        this.storeTable = audit != null ? ((JdbcIdempotencyStore) store).tableName() : null;
    }

    /**
     * Purges batch after batch, with one "now" for the whole run, until a batch deletes fewer than the batch size.
     *
     * @return how many records were deleted in all (not counting the audit's attempt rows)
     */
    public long purge() {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        long total = 0;
        int deleted;
        do {
            deleted = store.purgeExpired(now, batchSize);
            total += deleted;
        } while (deleted >= batchSize);
        if (audit != null && storeTable != null) {
            do {
                deleted = audit.purgeAttempts(storeTable, batchSize);
            } while (deleted >= batchSize);
        }
        return total;
    }

    /** Runs {@link #purge()}, for schedulers. */
    @Override
    public void run() {
        purge();
    }
}
