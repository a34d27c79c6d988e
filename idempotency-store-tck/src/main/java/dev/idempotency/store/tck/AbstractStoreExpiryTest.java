package dev.idempotency.store.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Layer 3 of the store TCK: expiry and purge. A completed record replays until its expiry, then is taken over; the
 * purge deletes expired completed records in bounded batches and never an in-flight or needs-review one.
 */
public abstract class AbstractStoreExpiryTest extends AbstractStoreLeaseTest {

    /** Claims and completes {@code key}, expiring at {@code expiresAt}. */
    protected ClaimRequest completed(String key, Instant expiresAt) {
        ClaimRequest r = request(key);
        assertThat(store.claim(r).isAcquired()).isTrue();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, expiresAt)).isTrue();
        return r;
    }

    @Test
    void aCompletedRecordReplaysUntilItExpiresThenRunsAgain() {
        IdempotentExecutor executor = executor();
        IdempotentOperation<String> op = IdempotentOperation
                .builder("TCK.expiring", Tier.REVERSIBLE, ResultType.of(String.class)).ttl("10m").build();
        AtomicInteger runs = new AtomicInteger();
        assertThat(executor.execute(op, key("E"), new Object[0], () -> "run-" + runs.incrementAndGet()))
                .isEqualTo("run-1");
        clock.advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(executor.execute(op, key("E"), new Object[0], () -> "run-" + runs.incrementAndGet()))
                .isEqualTo("run-1");
        clock.advance(Duration.ofMillis(1));
        assertThat(executor.execute(op, key("E"), new Object[0], () -> "run-" + runs.incrementAndGet()))
                .isEqualTo("run-2");
        // and with other arguments: an expired key is free for any call
        clock.advance(Duration.ofMinutes(11));
        assertThat(executor.execute(op, key("E"), new Object[] {"other"}, () -> "run-" + runs.incrementAndGet()))
                .isEqualTo("run-3");
    }

    @Test
    void aNodeWhoseClockRunsAheadPurgesOnlyWhatTheStoresClockSaysExpired() {
        Instant t = realNow();
        ClaimRequest r = request(key("purge-ahead"), "args", t);
        assertThat(store.claim(r).isAcquired()).isTrue();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, t.plus(Duration.ofHours(1))))
                .isTrue();
        int deleted = store.purgeExpired(t.plus(Duration.ofHours(3)), 10);
        if (hasSharedClock()) {
            assertThat(deleted).isZero();
            assertThat(store.find(r.keyHash())).isPresent();
        } else {
            assertThat(deleted).isEqualTo(1);
            assertThat(store.find(r.keyHash())).isEmpty();
        }
    }

    @Test
    void purgeDeletesOnlyExpiredCompletedRecordsInBoundedBatches() {
        Instant now = now();
        List<ClaimRequest> expired = new ArrayList<>();
        for (int i = 0; i < 23; i++) {
            expired.add(completed(key("expired-" + i), now.minusSeconds(i)));
        }
        ClaimRequest boundary = completed(key("boundary"), now);
        ClaimRequest alive = completed(key("alive"), now.plusMillis(1));
        ClaimRequest inFlight = new ClaimRequest(keyHash(key("in-flight")), "TCK.op", key("in-flight"),
                fingerprint("a"), Tier.REVERSIBLE, now.minusSeconds(100), now.minusSeconds(50),
                now.minusSeconds(10), java.time.Duration.ofSeconds(1));
        store.claim(inFlight);
        ClaimRequest review = new ClaimRequest(keyHash(key("review")), "TCK.op", key("review"), fingerprint("a"),
                Tier.IRREVERSIBLE, now.minusSeconds(100), now.minusSeconds(50), now.minusSeconds(10),
                java.time.Duration.ofSeconds(1));
        store.claim(review);
        store.markNeedsReview(review.keyHash(), review.leaseUntil());

        int total = 0;
        int deleted;
        do {
            deleted = store.purgeExpired(now, 5);
            assertThat(deleted).isBetween(0, 5);
            total += deleted;
        } while (deleted == 5);
        assertThat(total).isEqualTo(24);
        assertThat(store.purgeExpired(now, 5)).isZero();
        for (ClaimRequest r : expired) {
            assertThat(store.find(r.keyHash())).isEmpty();
        }
        assertThat(store.find(boundary.keyHash())).isEmpty();
        assertThat(store.find(alive.keyHash())).isPresent();
        assertThat(store.find(inFlight.keyHash())).contains(inFlight.toInFlightRecord());
        assertThat(store.find(review.keyHash()).map(IdempotencyRecord::status))
                .contains(IdempotencyRecord.Status.NEEDS_REVIEW);
        assertThat(store.purgeExpired(now.plus(Duration.ofDays(365)), 100)).isEqualTo(1);
        assertThat(store.find(inFlight.keyHash())).isPresent();
        assertThat(store.find(review.keyHash())).isPresent();
    }
}
