package dev.idempotency.store.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.internal.Fingerprints;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Layer 2 of the store TCK: leases. A claim whose lease ran out is stale; a takeover replaces exactly the observed
 * state; an irreversible stale claim becomes {@code NEEDS_REVIEW} until an operator resolves it.
 */
public abstract class AbstractStoreLeaseTest extends AbstractStoreClaimTest {

    /**
     * Whether the store counts and lists records by status ({@link dev.idempotency.store.IdempotencyStore#backlog},
     * {@code listNeedsReview}, {@code listStuck}: the operator's report and the backlog gauges). Every built-in store
     * does; a store of yours that leaves the SPI's defaults (which throw) returns false, and its reports say so.
     */
    protected boolean countsByStatus() {
        return true;
    }

    /** A claim of {@code key} of {@code operation} at {@link #now()}, with the given lease. */
    private ClaimRequest claimOf(String operation, String key, Duration lease) {
        ClaimRequest r = new ClaimRequest(Keys.hash(operation, "", key(key)), operation, key(key),
                fingerprint("args"), Tier.IRREVERSIBLE, now(), now().plus(lease), now().plus(Duration.ofHours(1)),
                Duration.ofSeconds(5));
        assertThat(store.claim(r).isAcquired()).isTrue();
        return r;
    }

    @Test
    void theBacklogCountsRecordsNeedingReviewAndClaimsStuckPastTheirLeasePerOperation() {
        Assumptions.assumeTrue(countsByStatus(), "the store does not count by status");
        ClaimRequest review1 = claimOf("TCK.a", "review-1", Duration.ofSeconds(30));
        store.markNeedsReview(review1.keyHash(), review1.leaseUntil());
        clock.advance(Duration.ofSeconds(1));
        ClaimRequest review2 = claimOf("TCK.a", "review-2", Duration.ofSeconds(30));
        store.markNeedsReview(review2.keyHash(), review2.leaseUntil());
        ClaimRequest stuckA = claimOf("TCK.a", "stuck", Duration.ofSeconds(10));
        ClaimRequest stuckB1 = claimOf("TCK.b", "stuck-1", Duration.ofSeconds(5));
        ClaimRequest stuckB2 = claimOf("TCK.b", "stuck-2", Duration.ofSeconds(8));
        ClaimRequest live = claimOf("TCK.c", "live", Duration.ofMinutes(5));
        ClaimRequest done = claimOf("TCK.c", "done", Duration.ofSeconds(1));
        store.complete(done.keyHash(), done.leaseUntil(), new byte[] {1}, now().plusSeconds(1));
        clock.advance(Duration.ofSeconds(10)); // stuck-1, stuck-2 and stuck are over; live is not; done expired

        assertThat(store.backlog(now())).containsExactly(
                new Backlog("TCK.a", 2, review1.now(), 1, stuckA.leaseUntil()),
                new Backlog("TCK.b", 0, null, 2, stuckB1.leaseUntil()));
        // a lease is over at its very end, not before
        assertThat(store.backlog(stuckA.leaseUntil().minusMillis(1))).containsExactly(
                new Backlog("TCK.a", 2, review1.now(), 0, null),
                new Backlog("TCK.b", 0, null, 2, stuckB1.leaseUntil()));
        assertThat(live.leaseUntil()).isAfter(now());
    }

    @Test
    void needsReviewIsListedOldestFirstAndStuckClaimsLongestStuckFirstUpToTheLimit() {
        Assumptions.assumeTrue(countsByStatus(), "the store does not count by status");
        ClaimRequest[] review = new ClaimRequest[3];
        for (int i = 0; i < 3; i++) {
            review[i] = claimOf("TCK.a", "review-" + i, Duration.ofSeconds(30));
            store.markNeedsReview(review[i].keyHash(), review[i].leaseUntil());
            clock.advance(Duration.ofSeconds(1));
        }
        ClaimRequest later = claimOf("TCK.b", "stuck-later", Duration.ofSeconds(20));
        ClaimRequest earlier = claimOf("TCK.a", "stuck-earlier", Duration.ofSeconds(5));
        claimOf("TCK.a", "live", Duration.ofMinutes(5));
        clock.advance(Duration.ofSeconds(30));

        List<IdempotencyRecord> reviews = store.listNeedsReview(2);
        assertThat(reviews).containsExactly(store.find(review[0].keyHash()).orElseThrow(),
                store.find(review[1].keyHash()).orElseThrow());
        assertThat(reviews).allSatisfy(r -> assertThat(r.status()).isEqualTo(Status.NEEDS_REVIEW));
        assertThat(store.listNeedsReview(10)).hasSize(3);
        assertThat(store.listStuck(now(), 10)).containsExactly(earlier.toInFlightRecord(), later.toInFlightRecord());
        assertThat(store.listStuck(now(), 1)).containsExactly(earlier.toInFlightRecord());
        assertThat(store.listStuck(earlier.leaseUntil(), 10)).containsExactly(earlier.toInFlightRecord());
    }

    @Test
    void anEmptyStoreHasNoBacklogAndALimitMustBePositive() {
        Assumptions.assumeTrue(countsByStatus(), "the store does not count by status");
        assertThat(store.backlog(now())).isEmpty();
        assertThat(store.listNeedsReview(5)).isEmpty();
        assertThat(store.listStuck(now(), 5)).isEmpty();
        assertThatThrownBy(() -> store.listNeedsReview(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> store.listStuck(now(), -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit");
    }

    @Test
    void aClaimIsStaleOnceItsLeaseRanOut() {
        ClaimRequest r = request(key("stale"));
        store.claim(r);
        clock.advance(Duration.ofSeconds(29));
        assertThat(store.claim(request(key("stale"))).record().isStale(now())).isFalse();
        clock.advance(Duration.ofSeconds(1));
        IdempotencyRecord seen = store.claim(request(key("stale"))).record();
        assertThat(seen).isEqualTo(r.toInFlightRecord());
        assertThat(seen.isStale(now())).isTrue();
    }

    @Test
    void aTakeOverReplacesTheObservedStaleClaimOnce() {
        ClaimRequest crashed = request(key("take"));
        store.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord observed = store.claim(request(key("take"))).record();

        ClaimRequest winner = request(key("take"), "args", now());
        ClaimRequest loser = request(key("take"), "args", now().plusMillis(1));
        ClaimResult won = store.takeOver(winner, observed);
        assertThat(won.isAcquired()).isTrue();
        ClaimResult lost = store.takeOver(loser, observed);
        assertThat(lost.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(lost.record()).isEqualTo(winner.toInFlightRecord());
        assertThat(store.find(winner.keyHash())).contains(winner.toInFlightRecord());

        // the old owner learns that its claim was taken: its lease no longer names the record
        assertThat(store.complete(crashed.keyHash(), crashed.leaseUntil(), new byte[] {1}, now())).isFalse();
        assertThat(store.release(crashed.keyHash(), crashed.leaseUntil())).isFalse();
        assertThat(store.complete(winner.keyHash(), winner.leaseUntil(), new byte[] {2}, now().plusSeconds(5)))
                .isTrue();
    }

    @Test
    void aTakeOverRefusesARecordThatChangedSinceItWasObserved() {
        ClaimRequest r = request(key("changed"));
        store.claim(r);
        IdempotencyRecord observed = store.find(r.keyHash()).orElseThrow();
        store.complete(r.keyHash(), r.leaseUntil(), new byte[] {5}, now().plusSeconds(60));
        ClaimResult result = store.takeOver(request(key("changed"), "args", now().plusSeconds(61)), observed);
        assertThat(result.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(result.record().status()).isEqualTo(Status.COMPLETED);
        assertThat(result.record().result()).containsExactly(5);
    }

    @Test
    void aTakeOverOfARecordThatVanishedClaimsTheFreeKey() {
        ClaimRequest r = request(key("vanished"));
        store.claim(r);
        IdempotencyRecord observed = store.find(r.keyHash()).orElseThrow();
        store.release(r.keyHash(), r.leaseUntil());
        ClaimRequest next = request(key("vanished"), "args", now().plusMillis(3));
        assertThat(store.takeOver(next, observed).isAcquired()).isTrue();
        assertThat(store.find(r.keyHash())).contains(next.toInFlightRecord());
    }

    @Test
    void aTakeOverOfARecordThatIsStillLiveIsRefused() {
        // the lease and the expiry lie in the future of every clock: the store's own and the request's
        Instant t = realNow();
        ClaimRequest live = request(key("live"), "args", t, Duration.ofHours(1), Duration.ofSeconds(5));
        assertThat(store.claim(live).isAcquired()).isTrue();
        IdempotencyRecord observed = store.find(live.keyHash()).orElseThrow();
        ClaimResult refused = store.takeOver(request(key("live"), "args", t.plusSeconds(60)), observed);
        assertThat(refused.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(refused.record()).isEqualTo(observed);
        assertThat(store.find(live.keyHash())).contains(live.toInFlightRecord());
        assertThat(store.complete(live.keyHash(), live.leaseUntil(), new byte[] {4}, t.plus(Duration.ofHours(2))))
                .isTrue();

        // an outcome before its expiry
        IdempotencyRecord completed = store.find(live.keyHash()).orElseThrow();
        ClaimResult replayed = store.takeOver(request(key("live"), "args", t.plus(Duration.ofHours(1))), completed);
        assertThat(replayed.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(replayed.record()).isEqualTo(completed);
        assertThat(store.find(live.keyHash())).contains(completed);
    }

    @Test
    void aNodeWhoseClockRunsAheadTakesOverOnlyWhatTheStoresClockSaysIsOver() {
        Instant t = realNow();
        Instant ahead = t.plus(Duration.ofHours(3));
        ClaimRequest live = request(key("ahead"), "args", t, Duration.ofHours(1), Duration.ofSeconds(5));
        assertThat(store.claim(live).isAcquired()).isTrue();
        IdempotencyRecord observed = store.find(live.keyHash()).orElseThrow();
        assertThat(observed.isStale(ahead)).isTrue();
        ClaimRequest skewed = request(key("ahead"), "args", ahead);
        ClaimResult result = store.takeOver(skewed, observed);
        if (hasSharedClock()) {
            assertThat(result.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
            assertThat(result.record()).isEqualTo(observed);
            assertThat(store.find(live.keyHash())).contains(live.toInFlightRecord());
            assertThat(store.complete(live.keyHash(), live.leaseUntil(), new byte[] {1}, t.plus(Duration.ofHours(2))))
                    .isTrue();
        } else {
            // a store without a clock of its own trusts the instant of the request
            assertThat(result.isAcquired()).isTrue();
            assertThat(store.find(live.keyHash())).contains(skewed.toInFlightRecord());
            assertThat(store.complete(skewed.keyHash(), skewed.leaseUntil(), new byte[] {1},
                    t.plus(Duration.ofHours(2)))).isTrue();
        }

        // an outcome that expires in two hours, seen by that node as expired
        IdempotencyRecord completed = store.find(live.keyHash()).orElseThrow();
        assertThat(completed.isExpired(ahead)).isTrue();
        ClaimResult again = store.takeOver(request(key("ahead"), "args", ahead.plusMillis(1)), completed);
        if (hasSharedClock()) {
            assertThat(again.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
            assertThat(again.record()).isEqualTo(completed);
        } else {
            assertThat(again.isAcquired()).isTrue();
        }
    }

    @Test
    void markNeedsReviewIfStaleMarksOnlyTheNamedClaimOnceItsLeaseEnded() {
        ClaimRequest crashed = request(key("if-stale"));
        store.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        assertThat(store.markNeedsReviewIfStale(crashed.keyHash(), crashed.leaseUntil().plusMillis(1), now()))
                .isFalse();
        assertThat(store.find(crashed.keyHash())).contains(crashed.toInFlightRecord());
        assertThat(store.markNeedsReviewIfStale(crashed.keyHash(), crashed.leaseUntil(), now())).isTrue();
        assertThat(store.find(crashed.keyHash()).orElseThrow().status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(store.markNeedsReviewIfStale(crashed.keyHash(), crashed.leaseUntil(), now())).isFalse();

        // a lease that has not ended, by any clock
        Instant t = realNow();
        ClaimRequest live = request(key("if-stale-live"), "args", t, Duration.ofHours(1), Duration.ofSeconds(5));
        store.claim(live);
        assertThat(store.markNeedsReviewIfStale(live.keyHash(), live.leaseUntil(), t.plusSeconds(1))).isFalse();
        assertThat(store.find(live.keyHash())).contains(live.toInFlightRecord());

        // by a node whose clock runs ahead: only the store's own clock can confirm it
        Instant ahead = t.plus(Duration.ofHours(3));
        assertThat(store.markNeedsReviewIfStale(live.keyHash(), live.leaseUntil(), ahead)).isEqualTo(!hasSharedClock());
        if (hasSharedClock()) {
            assertThat(store.find(live.keyHash())).contains(live.toInFlightRecord());
            assertThat(store.complete(live.keyHash(), live.leaseUntil(), new byte[] {1}, t.plus(Duration.ofHours(2))))
                    .isTrue();
        }

        // a completed record is no claim
        ClaimRequest done = request(key("if-stale-done"));
        store.claim(done);
        store.complete(done.keyHash(), done.leaseUntil(), new byte[] {1}, now().plusSeconds(1));
        clock.advance(Duration.ofMinutes(1));
        assertThat(store.markNeedsReviewIfStale(done.keyHash(), done.leaseUntil(), now())).isFalse();
        assertThat(store.find(done.keyHash()).orElseThrow().status()).isEqualTo(Status.COMPLETED);
    }

    @Test
    void renewExtendsExactlyTheClaimNamedByItsLease() {
        ClaimRequest r = request(key("renew"));
        assertThat(store.claim(r).isAcquired()).isTrue();
        Instant renewed = r.leaseUntil().plusSeconds(30);
        assertThat(store.renew(r.keyHash(), r.leaseUntil().plusMillis(1), renewed)).isFalse();
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        assertThat(store.renew(r.keyHash(), r.leaseUntil(), renewed)).isTrue();
        assertThat(store.find(r.keyHash())).contains(r.withLeaseUntil(renewed).toInFlightRecord());

        // past the old lease, the renewed claim is not stale
        clock.advance(Duration.ofSeconds(45));
        assertThat(store.find(r.keyHash()).orElseThrow().isStale(now())).isFalse();

        // the old lease no longer names the claim; the new one does
        assertThat(store.renew(r.keyHash(), r.leaseUntil(), renewed.plusSeconds(30))).isFalse();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, now().plusSeconds(60))).isFalse();
        assertThat(store.release(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.complete(r.keyHash(), renewed, new byte[] {2}, now().plusSeconds(60))).isTrue();
        assertThat(store.find(r.keyHash()).orElseThrow().result()).containsExactly(2);

        // a completed claim is renewed no more
        assertThat(store.renew(r.keyHash(), renewed, renewed.plusSeconds(30))).isFalse();
        assertThat(store.find(r.keyHash()).orElseThrow().status()).isEqualTo(Status.COMPLETED);

        // nor one that was taken over: the new owner's lease stays
        ClaimRequest crashed = request(key("renew-taken"));
        store.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord stale = store.find(crashed.keyHash()).orElseThrow();
        ClaimRequest next = request(key("renew-taken"), "args", now());
        assertThat(store.takeOver(next, stale).isAcquired()).isTrue();
        assertThat(store.renew(crashed.keyHash(), crashed.leaseUntil(), now().plusSeconds(300))).isFalse();
        assertThat(store.find(crashed.keyHash())).contains(next.toInFlightRecord());

        // nor one marked NEEDS_REVIEW
        ClaimRequest review = request(key("renew-review"));
        store.claim(review);
        store.markNeedsReview(review.keyHash(), review.leaseUntil());
        assertThat(store.renew(review.keyHash(), review.leaseUntil(), now().plusSeconds(300))).isFalse();
        assertThat(store.find(review.keyHash()).orElseThrow().status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(store.renew(keyHash(key("renew-none")), now(), now().plusSeconds(300))).isFalse();
    }

    @Test
    void aStaleClaimMarkedNeedsReviewStaysBlockedUntilResolved() {
        ClaimRequest r = request(key("review"));
        store.claim(r);
        clock.advance(Duration.ofMinutes(5));
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil())).isTrue();
        IdempotencyRecord blocked = store.find(r.keyHash()).orElseThrow();
        assertThat(blocked.status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(blocked.isStale(now())).isFalse();
        assertThat(blocked.isExpired(now().plus(Duration.ofDays(999)))).isFalse();
        assertThat(store.claim(request(key("review"))).record()).isEqualTo(blocked);
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, now())).isFalse();
        assertThat(store.release(r.keyHash(), r.leaseUntil())).isFalse();
    }

    @Test
    void resolveWithAResultCompletesAndWithoutOneReleases() {
        ClaimRequest r = request(key("resolve"));
        store.claim(r);
        store.markNeedsReview(r.keyHash(), r.leaseUntil());
        IdempotencyRecord review = store.find(r.keyHash()).orElseThrow();
        Instant expiresAt = now().plus(Duration.ofDays(2));
        assertThat(store.resolve(review, new byte[] {9, 9}, expiresAt)).isTrue();
        IdempotencyRecord resolved = r.toInFlightRecord().with(Status.COMPLETED, new byte[] {9, 9}, null, expiresAt);
        assertThat(store.find(r.keyHash())).contains(resolved);
        assertThat(store.resolve(resolved, null, expiresAt)).isTrue();
        assertThat(store.find(r.keyHash())).isEmpty();
        assertThat(store.resolve(resolved, null, expiresAt)).isFalse();
        assertThat(store.resolve(resolved, new byte[] {1}, expiresAt)).isFalse();
        assertThat(store.find(r.keyHash())).isEmpty();

        ClaimRequest inFlight = request(key("resolve-in-flight"));
        store.claim(inFlight);
        assertThat(store.resolve(inFlight.toInFlightRecord(), null, expiresAt)).isTrue();
        assertThat(store.claim(inFlight).isAcquired()).isTrue();
    }

    @Test
    void resolveOfAStaleObservationChangesNothing() {
        Instant expiresAt = now().plus(Duration.ofDays(2));
        // an operator saw a stale claim; a new attempt took it over before the operator's decision landed
        ClaimRequest crashed = request(key("resolve-taken"));
        store.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord seenStale = store.find(crashed.keyHash()).orElseThrow();
        ClaimRequest next = request(key("resolve-taken"), "args", now());
        assertThat(store.takeOver(next, seenStale).isAcquired()).isTrue();
        assertThat(store.resolve(seenStale, null, expiresAt)).isFalse();
        assertThat(store.resolve(seenStale, new byte[] {7}, expiresAt)).isFalse();
        assertThat(store.find(crashed.keyHash())).contains(next.toInFlightRecord());

        // the slow owner completed it before the operator's decision landed
        ClaimRequest slow = request(key("resolve-completed"));
        store.claim(slow);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord seenInFlight = store.find(slow.keyHash()).orElseThrow();
        assertThat(store.complete(slow.keyHash(), slow.leaseUntil(), new byte[] {5}, expiresAt)).isTrue();
        IdempotencyRecord completed = store.find(slow.keyHash()).orElseThrow();
        assertThat(store.resolve(seenInFlight, null, expiresAt)).isFalse();
        assertThat(store.resolve(seenInFlight, new byte[] {7}, expiresAt)).isFalse();
        assertThat(store.find(slow.keyHash())).contains(completed);

        // NEEDS_REVIEW, then resolved by another operator: a second decision on the old view does nothing
        ClaimRequest review = request(key("resolve-twice"));
        store.claim(review);
        clock.advance(Duration.ofMinutes(1));
        assertThat(store.markNeedsReview(review.keyHash(), review.leaseUntil())).isTrue();
        IdempotencyRecord seenReview = store.find(review.keyHash()).orElseThrow();
        assertThat(store.resolve(seenReview, new byte[] {1}, expiresAt)).isTrue();
        assertThat(store.resolve(seenReview, null, expiresAt)).isFalse();
        assertThat(store.find(review.keyHash()).orElseThrow().result()).containsExactly(1);

        // the observation must match in status, lease and expiry, each on its own
        ClaimRequest exact = request(key("resolve-exact"));
        store.claim(exact);
        IdempotencyRecord actual = store.find(exact.keyHash()).orElseThrow();
        assertThat(store.resolve(actual.with(Status.NEEDS_REVIEW, null, actual.leaseUntil(), actual.expiresAt()),
                null, expiresAt)).isFalse();
        assertThat(store.resolve(actual.with(Status.IN_FLIGHT, null, actual.leaseUntil().plusMillis(1),
                actual.expiresAt()), null, expiresAt)).isFalse();
        assertThat(store.resolve(actual.with(Status.IN_FLIGHT, null, null, actual.expiresAt()), null, expiresAt))
                .isFalse();
        assertThat(store.resolve(actual.with(Status.IN_FLIGHT, null, actual.leaseUntil(),
                actual.expiresAt().plusMillis(1)), null, expiresAt)).isFalse();
        assertThat(store.find(exact.keyHash())).contains(actual);
        assertThat(store.resolve(actual, null, expiresAt)).isTrue();

        // an unleased observation (a completed record) against a leased row and the other way round
        ClaimRequest done = request(key("resolve-unleased"));
        store.claim(done);
        assertThat(store.complete(done.keyHash(), done.leaseUntil(), new byte[] {3}, expiresAt)).isTrue();
        IdempotencyRecord doneRecord = store.find(done.keyHash()).orElseThrow();
        assertThat(store.resolve(doneRecord.with(Status.COMPLETED, null, done.leaseUntil(), expiresAt), null,
                expiresAt)).isFalse();
        assertThat(store.resolve(doneRecord, null, expiresAt)).isTrue();
        assertThat(store.find(done.keyHash())).isEmpty();
    }

    @Test
    void theExecutorTakesOverAStaleReversibleClaimAndStopsAnIrreversibleOne() {
        IdempotentExecutor executor = executor();
        AtomicInteger runs = new AtomicInteger();
        IdempotentOperation<String> reversible = IdempotentOperation
                .builder("TCK.reversible", Tier.REVERSIBLE, ResultType.of(String.class))
                .lockTimeout(Duration.ofMillis(200)).build();
        IdempotentOperation<String> irreversible = IdempotentOperation
                .builder("TCK.irreversible", Tier.IRREVERSIBLE, ResultType.of(String.class))
                .lockTimeout(Duration.ofMillis(200)).build();
        Object[] args = {"order-7"};
        byte[] revHash = crashedClaim(reversible, key("crash"), args);
        byte[] irrHash = crashedClaim(irreversible, key("crash"), args);

        // within the lease the attempt counts as in flight: the duplicate gives up after its lock timeout
        assertThatThrownBy(() -> executor.execute(reversible, key("crash"), args, () -> "no"))
                .isInstanceOf(IdempotencyInProgressException.class);
        clock.advance(reversible.lease());

        assertThat(executor.execute(reversible, key("crash"), args, () -> "again-" + runs.incrementAndGet()))
                .isEqualTo("again-1");
        assertThat(store.find(revHash).orElseThrow().status()).isEqualTo(Status.COMPLETED);
        assertThat(executor.execute(reversible, key("crash"), args, () -> "no")).isEqualTo("again-1");

        assertThatThrownBy(() -> executor.execute(irreversible, key("crash"), args,
                () -> "never-" + runs.incrementAndGet())).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(store.find(irrHash).orElseThrow().status()).isEqualTo(Status.NEEDS_REVIEW);
        clock.advance(Duration.ofDays(30));
        assertThatThrownBy(() -> executor.execute(irreversible, key("crash"), args,
                () -> "never-" + runs.incrementAndGet())).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(runs).hasValue(1);

        assertThat(store.resolve(store.find(irrHash).orElseThrow(), null, now())).isTrue();
        assertThat(executor.execute(irreversible, key("crash"), args, () -> "resolved-" + runs.incrementAndGet()))
                .isEqualTo("resolved-2");
    }

    /** Claims a key the way the executor does, as an attempt that then crashed: never completed nor released. */
    private byte[] crashedClaim(IdempotentOperation<?> op, String key, Object[] args) {
        byte[] hash = Keys.hash(op.name(), "", key);
        byte[] fingerprint = new Fingerprints(JacksonResultCodec.defaultMapper()).fingerprint(args, op::isIgnored);
        Instant t = now();
        assertThat(store.claim(new ClaimRequest(hash, op.name(), key, fingerprint, op.tier(), t, t.plus(op.lease()),
                t.plus(op.ttl()), op.lockTimeout())).isAcquired()).isTrue();
        return hash;
    }
}
