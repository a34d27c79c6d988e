package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotentExecutorTest {

    record Line(String sku, int quantity) { }

    record Receipt(String orderId, BigDecimal total, List<Line> lines) { }

    static final IdempotentOperation<Receipt> CREATE = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Receipt.class))
            .lockTimeout("2s")
            .build();

    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
    final AtomicInteger runs = new AtomicInteger();
    ExecutorService pool;

    @AfterEach
    void stopPool() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    Receipt order(String id) {
        runs.incrementAndGet();
        return new Receipt(id, new BigDecimal("12.50"), List.of(new Line("A-1", 2), new Line("B-2", 1)));
    }

    @Test
    void firstCallRunsAndDuplicateReplaysAnEqualResultWithoutRunning() {
        Receipt first = executor.execute(CREATE, "APPROVAL:1", new Object[] {"1"}, () -> order("o-1"));
        Receipt second = executor.execute(CREATE, "APPROVAL:1", new Object[] {"1"}, () -> order("o-2"));

        assertThat(runs).hasValue(1);
        assertThat(second).isEqualTo(first).isNotSameAs(first);
        assertThat(second.total().scale()).isEqualTo(2);
        assertThat(second.lines().get(0)).isInstanceOf(Line.class);
    }

    @Test
    void theSameKeyWithOtherArgumentsIsRefusedNamingOperationAndKeyOnly() {
        executor.execute(CREATE, "APPROVAL:2", new Object[] {"secret-payload-1"}, () -> order("o-1"));

        assertThatThrownBy(() -> executor.execute(CREATE, "APPROVAL:2", new Object[] {"secret-payload-2"},
                () -> order("o-2")))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("Orders.create").hasMessageContaining("APPROVAL:2")
                .hasMessageNotContaining("secret-payload");
        assertThat(runs).hasValue(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "\t"})
    void blankKeysAreRefusedBeforeAnythingRuns(String key) {
        assertThatThrownBy(() -> executor.execute(CREATE, key, new Object[0], () -> order("o")))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("Orders.create");
        assertThat(runs).hasValue(0);
        assertThat(store.size()).isZero();
    }

    @Test
    void aNullKeyIsRefused() {
        assertThatThrownBy(() -> executor.execute(CREATE, null, new Object[0], () -> order("o")))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("null");
        assertThat(runs).hasValue(0);
    }

    @Test
    void aFailureRecordsNothingAndTheRetryRunsAgain() {
        IllegalStateException boom = new IllegalStateException("gateway down");
        assertThatThrownBy(() -> executor.execute(CREATE, "K", new Object[0], () -> {
            runs.incrementAndGet();
            throw boom;
        })).isSameAs(boom);
        assertThat(store.size()).isZero();

        executor.execute(CREATE, "K", new Object[0], () -> order("o-2"));
        assertThat(runs).hasValue(2);
    }

    @Test
    void checkedExceptionsPassThroughUnchanged() {
        java.io.IOException io = new java.io.IOException("disk");
        assertThatThrownBy(() -> executor.execute(CREATE, "K", new Object[0], () -> {
            throw io;
        })).isSameAs(io);
    }

    @Test
    void readOnlyNeverTouchesTheStore() {
        IdempotentExecutor strict = IdempotentExecutor.builder(new FailingStore()).build();
        IdempotentOperation<String> read = IdempotentOperation
                .builder("Orders.read", Tier.READ_ONLY, ResultType.of(String.class)).build();

        assertThat(strict.execute(read, null, new Object[0], () -> "ok")).isEqualTo("ok");
    }

    @Test
    void sixteenThreadsWithOneKeyRunTheMethodOnceAndAllGetTheSameReceipt() throws Exception {
        int threads = 16;
        pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        // the callers of one key take turns with the store (KeyGates): the owner holds the claim until every caller
        // has entered the executor and a duplicate has met the claim in the store
        CountDownLatch entered = new CountDownLatch(threads);
        CountDownLatch claimed = new CountDownLatch(2);
        IdempotentExecutor counted = IdempotentExecutor.builder(new ForwardingStore(store) {
            @Override
            public dev.idempotency.store.ClaimResult claim(dev.idempotency.store.ClaimRequest request) {
                dev.idempotency.store.ClaimResult r = super.claim(request);
                claimed.countDown();
                return r;
            }
        }).maxWaitersPerKey(threads).build();
        List<Future<Receipt>> answers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            answers.add(pool.submit(() -> {
                start.await();
                entered.countDown();
                return counted.execute(CREATE, "APPROVAL:16", new Object[] {"16"}, () -> {
                    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(claimed.await(10, TimeUnit.SECONDS)).isTrue();
                    return order("o-" + runs.get());
                });
            }));
        }
        start.countDown();
        Set<Receipt> receipts = ConcurrentHashMap.newKeySet();
        for (Future<Receipt> f : answers) {
            receipts.add(f.get(10, TimeUnit.SECONDS));
        }
        assertThat(runs).hasValue(1);
        assertThat(receipts).hasSize(1);
    }

    @Test
    void aFloodOfDuplicatesPastTheCapIsRefusedAtOnceAndOnlyOneWaiterTalksToTheStore() throws Exception {
        AtomicInteger storeCallsAtOnce = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        IdempotentExecutor gated = IdempotentExecutor.builder(new ForwardingStore(store) {
            @Override
            public java.util.Optional<dev.idempotency.store.IdempotencyRecord> find(byte[] keyHash) {
                mostAtOnce.accumulateAndGet(storeCallsAtOnce.incrementAndGet(), Math::max);
                try {
                    return super.find(keyHash);
                } finally {
                    storeCallsAtOnce.decrementAndGet();
                }
            }
        }).maxWaitersPerKey(3).build();
        IdempotentOperation<Receipt> op = IdempotentOperation
                .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Receipt.class)).lockTimeout("5s").build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        pool = Executors.newFixedThreadPool(8);
        Future<Receipt> owner = pool.submit(() -> gated.execute(op, "FLOOD", new Object[0], () -> {
            running.countDown();
            assertThat(finish.await(10, TimeUnit.SECONDS)).isTrue();
            return order("o-flood");
        }));
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        // three duplicates fill the gate (the owner left it once it held the key) ...
        List<Future<Receipt>> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiting.add(pool.submit(() -> gated.execute(op, "FLOOD", new Object[0], () -> order("twice"))));
        }
        byte[] flood = dev.idempotency.internal.Keys.hash(op.name(), "", "FLOOD");
        await().atMost(java.time.Duration.ofSeconds(5)).until(() -> gated.callersOf(flood) == 3);
        // ... so the fourth is refused at once, without waiting its lock timeout of 5 s
        long before = System.nanoTime();
        assertThatThrownBy(() -> gated.execute(op, "FLOOD", new Object[0], () -> order("twice")))
                .isInstanceOf(IdempotencyInProgressException.class).hasMessageContaining("3 callers waiting");
        assertThat(System.nanoTime() - before).isLessThan(java.time.Duration.ofSeconds(1).toNanos());
        finish.countDown();
        Receipt first = owner.get(10, TimeUnit.SECONDS);
        for (Future<Receipt> f : waiting) {
            assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(first);
        }
        assertThat(runs).hasValue(1);
        assertThat(mostAtOnce).as("one waiter at a time talked to the store").hasValue(1);
    }

    @Test
    void aDuplicateWaitsForTheAttemptInFlightAndGivesUpAfterTheLockTimeout() throws Exception {
        IdempotentOperation<Receipt> quick = IdempotentOperation
                .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Receipt.class)).lockTimeout("200ms").build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        pool = Executors.newSingleThreadExecutor();
        Future<Receipt> first = pool.submit(() -> executor.execute(quick, "SLOW", new Object[0], () -> {
            running.countDown();
            finish.await();
            return order("o-1");
        }));
        running.await();

        assertThatThrownBy(() -> executor.execute(quick, "SLOW", new Object[0], () -> order("o-2")))
                .isInstanceOf(IdempotencyInProgressException.class)
                .hasMessageContaining("SLOW");

        finish.countDown();
        Receipt r = first.get(5, TimeUnit.SECONDS);
        assertThat(executor.execute(quick, "SLOW", new Object[0], () -> order("o-3"))).isEqualTo(r);
        assertThat(runs).hasValue(1);
    }

    @Test
    void listenersHearEveryOutcome() {
        List<IdempotencyEvent.Outcome> outcomes = new ArrayList<>();
        IdempotentExecutor heard = IdempotentExecutor.builder(store)
                .listener(e -> outcomes.add(e.outcome())).build();

        heard.execute(CREATE, "L", new Object[] {1}, () -> order("o"));
        heard.execute(CREATE, "L", new Object[] {1}, () -> order("o"));
        assertThatThrownBy(() -> heard.execute(CREATE, "L", new Object[] {2}, () -> order("o")))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThatThrownBy(() -> heard.execute(CREATE, " ", new Object[] {2}, () -> order("o")))
                .isInstanceOf(IdempotencyKeyException.class);

        assertThat(outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED, IdempotencyEvent.Outcome.REPLAYED,
                IdempotencyEvent.Outcome.KEY_REUSED, IdempotencyEvent.Outcome.FAILED);
    }

    @Test
    void aScopeTellsWhetherACallWasReplayed() {
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            executor.execute(CREATE, "S", new Object[0], () -> order("o"));
            assertThat(scope.replayed()).isFalse();
        }
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            executor.execute(CREATE, "S", new Object[0], () -> {
                throw new AssertionError("must not run");
            });
            assertThat(scope.replayed()).isTrue();
        }
    }

    @Test
    void theRunningMethodSeesItsCall() {
        String seen = executor.execute(
                IdempotentOperation.builder("Ctx.op", Tier.REVERSIBLE, ResultType.of(String.class)).build(), "C-1",
                new Object[0], () -> IdempotencyContext.current().orElseThrow().key());
        assertThat(seen).isEqualTo("C-1");
        assertThat(IdempotencyContext.current()).isEmpty();
    }

    @Test
    void insideACallersTransactionTheResultWaitsForTheCommit() {
        FakeTransaction tx = new FakeTransaction();
        IdempotentExecutor transactional = IdempotentExecutor.builder(store).transactions(tx).build();

        transactional.execute(CREATE, "TX", new Object[0], () -> order("o-1"));
        assertThat(store.find(hashOf("TX")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.IN_FLIGHT);

        tx.end(true);
        assertThat(store.find(hashOf("TX")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    @Test
    void aRolledBackTransactionLeavesNoRecordAndCompensatesOnce() {
        FakeTransaction tx = new FakeTransaction();
        IdempotentExecutor transactional = IdempotentExecutor.builder(store).transactions(tx).build();
        List<Receipt> undone = new ArrayList<>();

        Receipt r = transactional.execute(CREATE, "RB", new Object[0], () -> order("o-1"), undone::add);
        tx.end(false);

        assertThat(store.size()).isZero();
        assertThat(undone).containsExactly(r);
        transactional.execute(CREATE, "RB", new Object[0], () -> order("o-2"), undone::add);
        assertThat(runs).hasValue(2);
    }

    @Test
    void aClaimInTheCallersTransactionTellsListenersAndScopesHowItEndedAndRegistersNothingForNoOne() {
        BrokenStore joining = new BrokenStore(store);
        joining.claimInTransaction = true;
        List<IdempotencyEvent.Outcome> heard = new ArrayList<>();

        FakeTransaction unobserved = new FakeTransaction();
        IdempotentExecutor quiet = IdempotentExecutor.builder(joining).transactions(unobserved).build();
        quiet.execute(CREATE, "J-1", new Object[0], () -> order("o-1"));
        assertThat(unobserved.callbacks).as("no listener, no open scope: nothing to tell").isEmpty();
        unobserved.end(true);

        FakeTransaction listened = new FakeTransaction();
        IdempotentExecutor withListener = IdempotentExecutor.builder(joining).transactions(listened)
                .listener(e -> heard.add(e.outcome())).build();
        withListener.execute(CREATE, "J-2", new Object[0], () -> order("o-2"));
        assertThat(heard).as("told when the transaction ends").isEmpty();
        listened.end(false);
        assertThat(heard).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK);

        FakeTransaction scoped = new FakeTransaction();
        IdempotentExecutor withScope = IdempotentExecutor.builder(joining).transactions(scoped).build();
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            withScope.execute(CREATE, "J-3", new Object[0], () -> order("o-3"));
            assertThat(scope.lastOutcome()).isEmpty();
            scoped.end(false);
            assertThat(scope.lastOutcome()).contains(IdempotencyEvent.Outcome.ROLLED_BACK);
        }
    }

    /** The in-memory store, claiming "in the caller's transaction" and failing what the test names. */
    static final class BrokenStore extends ForwardingStore {
        boolean failComplete;
        boolean failRelease;
        boolean claimInTransaction;

        BrokenStore(dev.idempotency.store.IdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public dev.idempotency.store.ClaimResult claim(dev.idempotency.store.ClaimRequest request) {
            dev.idempotency.store.ClaimResult r = super.claim(request);
            return claimInTransaction && r.isAcquired() ? dev.idempotency.store.ClaimResult.acquired(true) : r;
        }

        @Override
        public boolean complete(byte[] keyHash, java.time.Instant leaseUntil, byte[] result,
                java.time.Instant expiresAt) {
            if (failComplete) {
                throw new IllegalStateException("database gone");
            }
            return super.complete(keyHash, leaseUntil, result, expiresAt);
        }

        @Override
        public boolean release(byte[] keyHash, java.time.Instant leaseUntil) {
            if (failRelease) {
                throw new IllegalStateException("database gone");
            }
            return super.release(keyHash, leaseUntil);
        }
    }

    @Test
    void aCompensationRunsWhenRecordingTheResultFailedAndTheTransactionRolledBack() {
        FakeTransaction tx = new FakeTransaction();
        BrokenStore broken = new BrokenStore(store);
        broken.claimInTransaction = true;
        broken.failComplete = true;
        IdempotentExecutor transactional = IdempotentExecutor.builder(broken).transactions(tx).build();
        List<Receipt> undone = new ArrayList<>();

        assertThatThrownBy(() -> transactional.execute(CREATE, "RF", new Object[0], () -> order("o-1"), undone::add))
                .isInstanceOf(IdempotencyStoreException.class)
                .satisfies(e -> assertThat(((IdempotencyStoreException) e).methodRan()).isTrue());
        tx.end(false);

        assertThat(undone).hasSize(1);
    }

    @Test
    void aCompensationRunsEvenWhenReleasingTheKeyAfterTheRollbackFails() {
        FakeTransaction tx = new FakeTransaction();
        BrokenStore broken = new BrokenStore(store);
        broken.failRelease = true;
        IdempotentExecutor transactional = IdempotentExecutor.builder(broken).transactions(tx).build();
        List<Receipt> undone = new ArrayList<>();

        transactional.execute(CREATE, "RR", new Object[0], () -> order("o-1"), undone::add);
        tx.end(false);

        assertThat(undone).hasSize(1);
    }

    @Test
    void leasesAndExpiriesReachTheStoreInWholeMilliseconds() {
        IdempotentOperation<Receipt> fine = IdempotentOperation
                .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Receipt.class))
                .lockTimeout(java.time.Duration.ofNanos(1_500_123)).ttl(java.time.Duration.ofNanos(86_400_000_000_777L))
                .build();
        executor.execute(fine, "MS", new Object[0], () -> order("o-1"));

        IdempotencyRecord record = store.find(hashOf("MS")).orElseThrow();
        assertThat(record.expiresAt().getNano() % 1_000_000).isZero();
        assertThat(record.createdAt().getNano() % 1_000_000).isZero();
    }

    @Test
    void onlyReversibleOperationsCompensate() {
        IdempotentOperation<String> pay = IdempotentOperation
                .builder("Pay.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();
        assertThatThrownBy(() -> executor.execute(pay, "P", new Object[0], () -> "x", x -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("REVERSIBLE");
    }

    /** A result the codec refuses to write, as a result type that slipped past the first-sight check would. */
    record Unwritable(String value) {
        public String getBoom() {
            throw new IllegalStateException("cannot serialize");
        }
    }

    @Test
    void anIrreversibleCallWhoseResultCannotBeRecordedStaysBlockedForReviewInsteadOfRunningTwice() {
        IdempotentOperation<Unwritable> pay = IdempotentOperation
                .builder("Orders.create", Tier.IRREVERSIBLE, ResultType.of(Unwritable.class)).build();

        assertThatThrownBy(() -> executor.execute(pay, "PAY-1", new Object[0], () -> {
            runs.incrementAndGet();
            return new Unwritable("sent");
        })).isInstanceOf(IdempotencyReplayException.class);

        assertThat(store.find(hashOf("PAY-1")).orElseThrow().status())
                .isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);
        assertThatThrownBy(() -> executor.execute(pay, "PAY-1", new Object[0], () -> {
            runs.incrementAndGet();
            return new Unwritable("sent again");
        })).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aReversibleCallWhoseResultCannotBeRecordedIsReleasedAndRunsAgain() {
        IdempotentOperation<Unwritable> op = IdempotentOperation
                .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Unwritable.class)).build();

        assertThatThrownBy(() -> executor.execute(op, "REV-1", new Object[0], () -> new Unwritable("x")))
                .isInstanceOf(IdempotencyReplayException.class);
        assertThat(store.find(hashOf("REV-1"))).isEmpty();
    }

    private static byte[] hashOf(String key) {
        return dev.idempotency.internal.Keys.hash("Orders.create", "", key);
    }

    /** A transaction whose end the test decides. */
    static final class FakeTransaction implements TransactionBridge {
        private final List<CompletionCallback> callbacks = new ArrayList<>();
        private boolean active = true;

        @Override
        public boolean isTransactionActive() {
            return active;
        }

        @Override
        public void afterCompletion(CompletionCallback callback) {
            callbacks.add(callback);
        }

        void end(boolean committed) {
            active = false;
            callbacks.forEach(c -> c.completed(committed ? Completion.COMMITTED : Completion.ROLLED_BACK));
        }
    }
}
