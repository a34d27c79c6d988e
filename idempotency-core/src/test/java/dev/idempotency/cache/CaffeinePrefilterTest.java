package dev.idempotency.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.cache.TestSupport.CountingStore;
import dev.idempotency.cache.TestSupport.ManualTransactions;
import dev.idempotency.cache.TestSupport.MutableClock;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CaffeinePrefilterTest {

    private static final String OP = "Orders.create";

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final CountingStore store = new CountingStore(new InMemoryIdempotencyStore());
    private final List<Outcome> outcomes = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private final IdempotentOperation<String> create = IdempotentOperation
            .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).ttl("1h").build();

    private IdempotentExecutor executor(IdempotencyStore s, TransactionBridge tx) {
        return IdempotentExecutor.builder(s).clock(clock).transactions(tx)
                .listener((IdempotencyEvent e) -> outcomes.add(e.outcome())).build();
    }

    private String call(IdempotentExecutor executor, String key, String argument) {
        return executor.execute(create, key, new Object[] {argument}, () -> "order-" + runs.incrementAndGet());
    }

    private static byte[] hash(String key) {
        return Keys.hash(OP, "", Keys.normalize(key));
    }

    private ClaimRequest request(String key, String fingerprintSeed) {
        Instant now = clock.instant();
        byte[] fingerprint = Keys.hash("fp", "", fingerprintSeed);
        return new ClaimRequest(hash(key), OP, key, fingerprint, Tier.REVERSIBLE, now, now.plusSeconds(30),
                now.plus(Duration.ofHours(1)), Duration.ofSeconds(10));
    }

    @Test
    void aCachedReplayMakesNoStoreCallAtAll() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);

        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(store.log).containsExactly("claim", "complete");
        store.reset();

        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");

        assertThat(store.calls).hasValue(0);
        assertThat(runs).hasValue(1);
        assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.REPLAYED_CACHED, Outcome.REPLAYED_CACHED);
    }

    @Test
    void aCachedOutcomeStillRefusesOtherArgumentsWithoutTheStore() {
        IdempotentExecutor executor = executor(CaffeinePrefilter.wrap(store).clock(clock).build(),
                TransactionBridge.NONE);
        call(executor, "K1", "a");
        store.reset();

        assertThatThrownBy(() -> call(executor, "K1", "other")).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(store.calls).hasValue(0);
    }

    @Test
    void aResultWhoseTransactionRolledBackNeverEntersTheCache() {
        ManualTransactions tx = new ManualTransactions();
        CountingStore joining = new CountingStore(new TransactionJoiningStore(tx));
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(joining).clock(clock).transactions(tx).build();
        IdempotentExecutor executor = executor(prefilter, tx);

        tx.begin();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        // the store answers its own uncommitted row inside the transaction: replayed from the store, not cached
        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(prefilter.isCached(hash("K1"))).isFalse();
        tx.rollback();

        assertThat(prefilter.isCached(hash("K1"))).isFalse();
        assertThat(prefilter.cachedOutcomes()).isZero();
        joining.reset();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-2");
        assertThat(joining.log).containsExactly("claim", "complete");
        // the first call's transaction rolled back: counted as rolled back, not executed, when it ended
        assertThat(outcomes).containsExactly(Outcome.REPLAYED, Outcome.ROLLED_BACK, Outcome.EXECUTED);
    }

    @Test
    void withoutTheBridgeAnOutcomeWrittenInTheCallersTransactionIsNeverCached() {
        ManualTransactions tx = new ManualTransactions();
        TransactionJoiningStore joining = new TransactionJoiningStore(tx);
        CaffeinePrefilter blind = CaffeinePrefilter.wrap(joining).clock(clock).build();   // no .transactions(tx)
        IdempotentExecutor executor = executor(blind, tx);

        tx.begin();
        call(executor, "K9", "a");
        assertThat(blind.isCached(hash("K9"))).as("it cannot know whether this transaction commits").isFalse();
        tx.rollback();

        assertThat(call(executor, "K9", "a")).as("the rolled-back call runs again").isEqualTo("order-2");
    }

    @Test
    void aResultEntersTheCacheWhenItsTransactionCommits() {
        ManualTransactions tx = new ManualTransactions();
        CountingStore joining = new CountingStore(new TransactionJoiningStore(tx));
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(joining).clock(clock).transactions(tx).build();
        IdempotentExecutor executor = executor(prefilter, tx);

        tx.begin();
        call(executor, "K1", "a");
        assertThat(prefilter.isCached(hash("K1"))).isFalse();
        tx.commit();

        assertThat(prefilter.isCached(hash("K1"))).isTrue();
        joining.reset();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(joining.calls).hasValue(0);
    }

    @Test
    void withAStoreThatCannotJoinTheTransactionTheDeferredResultIsCachedOnlyAfterCommit() {
        ManualTransactions tx = new ManualTransactions();
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).transactions(tx).build();
        IdempotentExecutor executor = executor(prefilter, tx);

        tx.begin();
        call(executor, "K1", "a");
        tx.rollback();
        assertThat(prefilter.cachedOutcomes()).isZero();

        tx.begin();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-2");
        tx.commit();
        // the executor completed it from its after-commit callback, when no transaction was active any more
        assertThat(prefilter.isCached(hash("K1"))).isTrue();
        store.reset();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-2");
        assertThat(store.calls).hasValue(0);
    }

    @Test
    void whenTheTransactionCanNoLongerBeObservedNothingIsCached() {
        // Spring's bridge during its completion callbacks: a transaction looks active, yet accepts no callback
        TransactionBridge ending = new TransactionBridge() {
            @Override
            public boolean isTransactionActive() {
                return true;
            }

            @Override
            public void afterCompletion(CompletionCallback callback) {
                throw new IllegalStateException("Transaction synchronization is not active");
            }
        };
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).transactions(ending).build();
        ClaimRequest r = request("K1", "a");
        prefilter.claim(r);

        assertThat(prefilter.complete(r.keyHash(), r.leaseUntil(), new byte[] {'1'}, r.expiresAt())).isTrue();
        assertThat(prefilter.cachedOutcomes()).isZero();
        assertThat(prefilter.claim(request("K1", "a")).isCached()).isFalse();
    }

    @Test
    void aCompletedRecordReadFromTheStoreIsCached() {
        IdempotencyStore plain = new InMemoryIdempotencyStore();
        call(executor(plain, TransactionBridge.NONE), "K1", "a"); // another node completed it
        CountingStore counting = new CountingStore(plain);
        IdempotentExecutor executor = executor(CaffeinePrefilter.wrap(counting).clock(clock).build(),
                TransactionBridge.NONE);

        call(executor, "K1", "a");
        call(executor, "K1", "a");

        assertThat(counting.log).containsExactly("claim");
        assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.REPLAYED, Outcome.REPLAYED_CACHED);
    }

    @Test
    void aCachedReplayDoesNotWaitBehindACallerOfTheSameKeyThatIsAskingTheStore() throws Exception {
        IdempotencyStore plain = new InMemoryIdempotencyStore();
        call(executor(plain, TransactionBridge.NONE), "K1", "a"); // another node completed it
        CountDownLatch inStore = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        IdempotencyStore slow = new ForwardingStore(plain) {
            @Override
            public ClaimResult claim(ClaimRequest request) {
                inStore.countDown();
                try {
                    letGo.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.claim(request);
            }
        };
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(slow).clock(clock).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> call(executor, "K1", "a"));
        try {
            // the first caller holds its turn at the key while the store is slow to answer it; meanwhile the outcome
            // enters the cache (an operator's read here)
            assertThat(inStore.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(prefilter.find(hash("K1"))).isPresent();

            String replayed = CompletableFuture.supplyAsync(() -> call(executor, "K1", "a")).get(5, TimeUnit.SECONDS);

            assertThat(replayed).isEqualTo("order-1");
            assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.REPLAYED_CACHED);
        } finally {
            letGo.countDown();
        }
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("order-1");
        assertThat(runs).hasValue(1);
    }

    @Test
    void anEntryExpiresWithItsRecord() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);
        call(executor, "K1", "a");
        store.reset();

        clock.advance(Duration.ofMinutes(59));
        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(store.calls).hasValue(0);

        clock.advance(Duration.ofMinutes(1)); // expiresAt reached: no longer replayed
        assertThat(prefilter.isCached(hash("K1"))).isFalse();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-2");
        assertThat(store.log).containsExactly("claim", "takeOver", "complete");
    }

    @Test
    void maximumAgeBoundsAnEntryBelowItsRecordsExpiry() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).maximumAge(Duration.ofMinutes(5))
                .build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);
        call(executor, "K1", "a");
        clock.advance(Duration.ofMinutes(5));
        store.reset();

        assertThat(call(executor, "K1", "a")).isEqualTo("order-1");
        assertThat(store.log).containsExactly("claim");
        assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.REPLAYED);
    }

    @Test
    void theCacheIsBoundedInSizeAndTheStoreAnswersWhatItDropped() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).maximumSize(3).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);
        for (int i = 0; i < 20; i++) {
            call(executor, "K" + i, "a");
        }
        prefilter.cleanUp();
        assertThat(prefilter.cachedOutcomes()).isEqualTo(3);

        outcomes.clear();
        for (int i = 0; i < 20; i++) {
            assertThat(call(executor, "K" + i, "a")).isEqualTo("order-" + (i + 1));
        }
        assertThat(runs).hasValue(20);
        assertThat(outcomes).contains(Outcome.REPLAYED).doesNotContain(Outcome.EXECUTED);
    }

    @Test
    void itNeverAnswersAcquiredNorAnythingButACompletedRecord() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();

        ClaimResult first = prefilter.claim(request("K1", "a"));
        assertThat(first.isAcquired()).isTrue();
        assertThat(store.log).containsExactly("claim"); // the store acquired, not the cache
        ClaimResult inFlight = prefilter.claim(request("K1", "a"));
        assertThat(inFlight.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(inFlight.isCached()).isFalse();
        assertThat(inFlight.record().status()).isEqualTo(IdempotencyRecord.Status.IN_FLIGHT);
        assertThat(prefilter.cachedOutcomes()).isZero();

        // the claim is released (the method failed): the next claim goes to the store, which acquires
        assertThat(prefilter.release(hash("K1"), first.isAcquired() ? request("K1", "a").leaseUntil() : null))
                .isTrue();
        store.reset();
        assertThat(prefilter.claim(request("K1", "a")).isAcquired()).isTrue();
        assertThat(store.log).containsExactly("claim");
    }

    @Test
    void needsReviewIsNeverCached() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        ClaimRequest r = request("K1", "a");
        prefilter.claim(r);
        prefilter.markNeedsReview(r.keyHash(), r.leaseUntil());
        store.reset();

        ClaimResult again = prefilter.claim(request("K1", "a"));
        assertThat(again.record().status()).isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);
        assertThat(again.isCached()).isFalse();
        assertThat(prefilter.find(r.keyHash())).isPresent();
        assertThat(prefilter.cachedOutcomes()).isZero();
    }

    @Test
    void anOperatorsResolveOnThisNodeIsSeenAtOnce() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE);
        call(executor, "K1", "a");
        assertThat(prefilter.isCached(hash("K1"))).isTrue();

        IdempotencyRecord completed = prefilter.find(hash("K1")).orElseThrow();
        assertThat(prefilter.resolve(completed, null, clock.instant())).isTrue(); // evict the key
        assertThat(prefilter.isCached(hash("K1"))).isFalse();
        assertThat(call(executor, "K1", "a")).isEqualTo("order-2");

        byte[] decided = "\"order-by-operator\"".getBytes(StandardCharsets.UTF_8);
        prefilter.resolve(prefilter.find(hash("K1")).orElseThrow(), decided,
                clock.instant().plus(Duration.ofHours(1)));
        assertThat(call(executor, "K1", "a")).isEqualTo("order-by-operator");
    }

    @Test
    void aRecordReadWhileThisNodeChangesTheKeyIsNotCached() {
        // the store answers the old completed record, and the key is resolved on this node before the answer is
        // cached: the stale answer must not stay in the cache
        InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
        call(executor(memory, TransactionBridge.NONE), "K1", "a");
        CaffeinePrefilter[] self = new CaffeinePrefilter[1];
        IdempotencyStore racing = new CountingStore(memory) {
            @Override
            public ClaimResult claim(ClaimRequest request) {
                ClaimResult old = super.claim(request);
                self[0].resolve(old.record(), null, request.now()); // concurrently, an operator evicts
                return old;
            }
        };
        self[0] = CaffeinePrefilter.wrap(racing).clock(clock).build();

        ClaimResult answer = self[0].claim(request("K1", "a"));

        assertThat(answer.record().status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);
        assertThat(self[0].isCached(hash("K1"))).isFalse();
    }

    @Test
    void aPurgeDelegatesAndDropsExpiredEntries() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        call(executor(prefilter, TransactionBridge.NONE), "K1", "a");
        clock.advance(Duration.ofHours(2));

        assertThat(prefilter.purgeExpired(clock.instant(), 100)).isEqualTo(1);
        assertThat(prefilter.cachedOutcomes()).isZero();
    }

    @Test
    void theBuilderRefusesNonsense() {
        assertThatThrownBy(() -> CaffeinePrefilter.wrap(store).maximumSize(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maximumSize");
        assertThatThrownBy(() -> CaffeinePrefilter.wrap(store).maximumAge(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maximumAge");
        CaffeinePrefilter once = CaffeinePrefilter.wrap(store).build();
        assertThatThrownBy(() -> CaffeinePrefilter.wrap(once).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already wrapped");
    }

    /**
     * Joins the caller's transaction the way the JDBC store does: inside one, a claim is an uncommitted write that
     * this transaction sees and a rollback undoes.
     */
    private static final class TransactionJoiningStore extends ForwardingStore {
        private final InMemoryIdempotencyStore rows;
        private final ManualTransactions tx;

        TransactionJoiningStore(ManualTransactions tx) {
            this(new InMemoryIdempotencyStore(), tx);
        }

        private TransactionJoiningStore(InMemoryIdempotencyStore rows, ManualTransactions tx) {
            super(rows);
            this.rows = rows;
            this.tx = tx;
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            ClaimResult r = rows.claim(request);
            if (r.isAcquired() && tx.isTransactionActive()) {
                tx.afterCompletion(completion -> {
                    if (completion != TransactionBridge.Completion.COMMITTED) {
                        rows.find(request.keyHash()).ifPresent(row -> rows.resolve(row, null, request.now()));
                    }
                });
                return ClaimResult.acquired(true);
            }
            return r;
        }
    }
}
