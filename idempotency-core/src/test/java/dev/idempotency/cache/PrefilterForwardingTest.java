package dev.idempotency.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.cache.TestSupport.CountingStore;
import dev.idempotency.cache.TestSupport.MutableClock;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Predicate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Every call the pre-filter passes on returns the store's own answer, and every change this node makes to a key drops
 * the outcome cached for it, so that the next claim asks the store.
 */
class PrefilterForwardingTest {

    private static final String OP = "Orders.create";
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final CountingStore store = new CountingStore(new InMemoryIdempotencyStore());
    private final CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(prefilter).clock(clock).build();
    private final IdempotentOperation<String> create = IdempotentOperation
            .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).ttl("1h").build();

    private static byte[] hash(String key) {
        return Keys.hash(OP, "", key);
    }

    private IdempotencyRecord cachedOutcome(String key) {
        executor.execute(create, key, new Object[0], () -> "done-" + key);
        assertThat(prefilter.isCached(hash(key))).isTrue();
        return store.find(hash(key)).orElseThrow();
    }

    /** A store that answers every conditional write with {@code answer}, without doing it. */
    private static CaffeinePrefilter answering(boolean answer) {
        return CaffeinePrefilter.wrap(new dev.idempotency.store.ForwardingStore(new InMemoryIdempotencyStore()) {
            @Override
            public boolean release(byte[] keyHash, Instant leaseUntil) {
                return answer;
            }

            @Override
            public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
                return answer;
            }

            @Override
            public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
                return answer;
            }

            @Override
            public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
                return answer;
            }

            @Override
            public boolean resolve(IdempotencyRecord observed, byte[] result, Instant expiresAt) {
                return answer;
            }

            @Override
            public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
                return answer;
            }
        }).build();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void everyConditionalWriteReturnsTheStoresAnswer(boolean answer) {
        CaffeinePrefilter p = answering(answer);
        byte[] k = hash("K");
        Instant now = clock.instant();
        assertThat(p.release(k, now)).isEqualTo(answer);
        assertThat(p.markNeedsReview(k, now)).isEqualTo(answer);
        assertThat(p.markNeedsReviewIfStale(k, now, now)).isEqualTo(answer);
        assertThat(p.renew(k, now, now.plusSeconds(1))).isEqualTo(answer);
        assertThat(p.complete(k, now, new byte[] {'1'}, now.plusSeconds(60))).isEqualTo(answer);
        IdempotencyRecord record = new IdempotencyRecord(k, OP, "K", new byte[32], Tier.REVERSIBLE,
                IdempotencyRecord.Status.NEEDS_REVIEW, null, now, now, now.plusSeconds(60));
        assertThat(p.resolve(record, null, now.plusSeconds(60))).isEqualTo(answer);
    }

    private void assertNextClaimAsksTheStore(String key) {
        assertThat(prefilter.isCached(hash(key))).as("dropped from the cache").isFalse();
        store.reset();
        prefilter.claim(request(key));
        assertThat(store.log).containsExactly("claim");
    }

    private ClaimRequest request(String key) {
        Instant now = clock.instant();
        return new ClaimRequest(hash(key), OP, key, Keys.sha256().digest(new byte[0]), Tier.REVERSIBLE, now,
                now.plusSeconds(30), now.plus(Duration.ofHours(1)), Duration.ofSeconds(10));
    }

    @Test
    void releaseDropsTheCachedOutcome() {
        IdempotencyRecord r = cachedOutcome("R");
        prefilter.release(r.keyHash(), clock.instant());
        assertNextClaimAsksTheStore("R");
    }

    @Test
    void markingForReviewDropsTheCachedOutcome() {
        IdempotencyRecord r = cachedOutcome("M");
        prefilter.markNeedsReview(r.keyHash(), clock.instant());
        assertNextClaimAsksTheStore("M");
        IdempotencyRecord s = cachedOutcome("S");
        prefilter.markNeedsReviewIfStale(s.keyHash(), clock.instant(), clock.instant());
        assertNextClaimAsksTheStore("S");
    }

    @Test
    void resolvingAndTakingOverDropTheCachedOutcome() {
        IdempotencyRecord r = cachedOutcome("V");
        prefilter.resolve(r, null, clock.instant().plusSeconds(60));
        assertNextClaimAsksTheStore("V");
        IdempotencyRecord t = cachedOutcome("T");
        prefilter.takeOver(request("T"), t);
        assertThat(prefilter.isCached(hash("T"))).isFalse();
    }

    @Test
    void aTakenOverClaimThatCompletesIsCached() {
        clock.advance(Duration.ZERO);
        IdempotencyRecord expired = cachedOutcome("X");
        clock.advance(Duration.ofHours(2));
        // past its ttl: the executor takes the key over, runs again, and the new outcome is cached
        assertThat(executor.execute(create, "X", new Object[0], () -> "second")).isEqualTo("second");
        assertThat(expired.expiresAt()).isBefore(clock.instant());
        assertThat(prefilter.isCached(hash("X"))).isTrue();
        store.reset();
        assertThat(executor.execute(create, "X", new Object[0], () -> "third")).isEqualTo("second");
        assertThat(store.calls).hasValue(0);
    }

    @Test
    void findCachesACompletedRecordSoTheNextClaimNeedsNoStore() {
        executor.execute(create, "F", new Object[0], () -> "done");
        prefilter.clear();
        assertThat(prefilter.isCached(hash("F"))).isFalse();
        assertThat(prefilter.find(hash("F"))).isPresent();
        assertThat(prefilter.isCached(hash("F"))).isTrue();
        store.reset();
        assertThat(executor.execute(create, "F", new Object[0], () -> "again")).isEqualTo("done");
        assertThat(store.calls).hasValue(0);
    }

    @Test
    void clearForgetsEveryOutcomeAndAStoreThatRefusesToCompleteIsNeverCached() {
        cachedOutcome("A");
        cachedOutcome("B");
        prefilter.clear();
        assertThat(prefilter.cachedOutcomes()).isZero();
        assertNextClaimAsksTheStore("A");

        CaffeinePrefilter refusing = answering(false);
        ClaimRequest claim = request("C");
        assertThat(refusing.claim(claim).isAcquired()).isTrue();
        assertThat(refusing.complete(claim.keyHash(), claim.leaseUntil(), new byte[] {'1'}, claim.expiresAt()))
                .isFalse();
        assertThat(refusing.isCached(claim.keyHash())).isFalse();
    }

    @Test
    void aRenewedClaimStillCachesItsOutcome() {
        ClaimRequest claim = request("N");
        assertThat(prefilter.claim(claim).isAcquired()).isTrue();
        Instant renewed = claim.leaseUntil().plusSeconds(30);
        assertThat(prefilter.renew(claim.keyHash(), claim.leaseUntil(), renewed)).isTrue();
        assertThat(prefilter.complete(claim.keyHash(), renewed, new byte[] {'1'}, claim.expiresAt())).isTrue();
        assertThat(prefilter.isCached(claim.keyHash())).isTrue();
        Predicate<byte[]> cached = prefilter::isCached;
        assertThat(cached.test(hash("other"))).isFalse();
    }
}
