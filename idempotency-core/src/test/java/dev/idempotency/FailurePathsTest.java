package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.TierRulesTest.MutableClock;
import dev.idempotency.TransactionBridge.Completion;
import dev.idempotency.TransactionEdgesTest.Transaction;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a caller and an operator see when something around the method fails: a store that cannot release, hold or
 * record, a transaction that ends after the method returned, a compensation that throws, a waiting thread that is
 * interrupted. Each failure reaches the caller's exception (as a suppressed one), a listener, or the log: never
 * nowhere.
 */
class FailurePathsTest {

    static final IdempotentOperation<String> ORDER = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).lockTimeout("2s").build();
    static final IdempotentOperation<String> PAYOUT = IdempotentOperation
            .builder("Payouts.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();
    static final IdempotentOperation<String> CART = IdempotentOperation
            .builder("Carts.add", Tier.REVERSIBLE, ResultType.of(String.class))
            .onStoreDown(StoreDown.PROCEED_UNGUARDED).compensated(true).build();
    static final IdempotentOperation<String> TRANSFER = IdempotentOperation
            .builder("Accounts.transfer", Tier.REVERSIBLE, ResultType.of(String.class))
            .replayExceptions(Declined.class).build();

    /** A business decision the operation records and replays. */
    public static final class Declined extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Declined(String message) {
            super(message);
        }
    }

    final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T10:00:00Z"));
    final Breakable store = new Breakable(new InMemoryIdempotencyStore());
    final Transaction tx = new Transaction();
    final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();

    {
        store.tx = tx;
    }

    final IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(clock).transactions(tx)
            .listener(events::add).build();
    final AtomicInteger runs = new AtomicInteger();
    final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    final Logger logger = Logger.getLogger(IdempotentExecutor.class.getName());
    final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureLog() {
        logger.addHandler(handler);
    }

    @AfterEach
    void releaseLog() {
        logger.removeHandler(handler);
    }

    private List<String> log(Level level) {
        return logged.stream().filter(r -> r.getLevel() == level).map(LogRecord::getMessage).toList();
    }

    private List<Outcome> outcomes() {
        return events.stream().map(IdempotencyEvent::outcome).toList();
    }

    private String order(String key) {
        return executor.execute(ORDER, key, new Object[] {key}, () -> "order-" + runs.incrementAndGet());
    }

    private IdempotencyRecord.Status status(IdempotentOperation<?> op, String key) {
        return store.find(Keys.hash(op.name(), "", key)).map(IdempotencyRecord::status).orElse(null);
    }

    // ---- the store fails after the method ran -----------------------------------------------------------------------

    @Test
    void aKeyThatCannotBeReleasedAfterAFailureRidesOnTheCallersException() {
        store.failRelease = true;
        IOException thrown = new IOException("gateway down");

        assertThatThrownBy(() -> executor.execute(ORDER, "K-1", new Object[] {"K-1"}, () -> {
            throw thrown;
        })).isSameAs(thrown);
        assertThat(thrown.getSuppressed()).singleElement()
                .satisfies(e -> assertThat(e).hasMessageContaining("release refused"));
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
    }

    @Test
    void anIrreversibleClaimThatCannotBeHeldForReviewRidesOnTheCallersException() {
        store.failMarkNeedsReview = true;
        IllegalStateException thrown = new IllegalStateException("timeout from the bank");

        assertThatThrownBy(() -> executor.execute(PAYOUT, "P-1", new Object[] {"P-1"}, () -> {
            throw thrown;
        })).isSameAs(thrown);
        assertThat(thrown.getSuppressed()).singleElement()
                .satisfies(e -> assertThat(e).hasMessageContaining("review refused"));
    }

    @Test
    void aClaimThatCannotBeSettledAfterARollbackIsLoggedAsStayingInFlight() {
        store.failMarkNeedsReview = true;
        tx.begin();
        executor.execute(PAYOUT, "P-2", new Object[] {"P-2"}, () -> "paid");
        tx.end(Completion.ROLLED_BACK);

        assertThat(log(Level.SEVERE)).singleElement().satisfies(m -> assertThat(m)
                .contains("could not hold for review the claim of Payouts.send key 'P-2'")
                .contains("stays in flight until its lease ends"));
        assertThat(status(PAYOUT, "P-2")).isEqualTo(IdempotencyRecord.Status.IN_FLIGHT);

        store.failRelease = true;
        tx.begin();
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-9", new Object[] {"T-9"}, () -> {
            throw new Declined("no funds");
        })).isInstanceOf(Declined.class);
        tx.end(Completion.ROLLED_BACK);

        assertThat(log(Level.SEVERE)).hasSize(2).last().satisfies(m -> assertThat(m)
                .contains("could not release the claim of Accounts.transfer key 'T-9'"));
    }

    @Test
    void aDeclaredExceptionWhoseOutcomeCannotBeRecordedCarriesTheStoreFailure() {
        store.failComplete = true;
        Declined declined = new Declined("no funds");

        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-1", new Object[] {"T-1"}, () -> {
            throw declined;
        })).isSameAs(declined);
        assertThat(declined.getSuppressed()).singleElement()
                .isInstanceOf(IdempotencyStoreException.class)
                .satisfies(e -> assertThat(e).hasMessageContaining("could not record the result of key 'T-1'"));
    }

    @Test
    void aDeclaredExceptionWhoseCommitIsUnknownReleasesItsKey() {
        tx.begin();
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-2", new Object[] {"T-2"}, () -> {
            throw new Declined("no funds");
        })).isInstanceOf(Declined.class);
        tx.end(Completion.UNKNOWN);

        assertThat(status(TRANSFER, "T-2")).as("a decision did nothing: nothing stays held").isNull();
        assertThat(executor.execute(TRANSFER, "T-2", new Object[] {"T-2"}, () -> "sent")).isEqualTo("sent");
    }

    // ---- the caller's transaction ends after the method returned ---------------------------------------------------

    @Test
    void listenersHearHowTheCallersTransactionEnded() {
        for (Completion completion : Completion.values()) {
            tx.begin();
            executor.execute(PAYOUT, "P-" + completion, new Object[] {"x"}, () -> "paid");
            assertThat(events).as("nothing is published before the transaction ends").isEmpty();
            tx.end(completion);
            assertThat(outcomes()).as(completion.name()).containsExactly(switch (completion) {
                case COMMITTED -> Outcome.EXECUTED;
                case ROLLED_BACK -> Outcome.ROLLED_BACK;
                case UNKNOWN -> Outcome.OUTCOME_UNKNOWN;
            });
            events.clear();
        }
    }

    @Test
    void anOutcomeThatCannotBeRecordedWhenTheTransactionCommitsIsLoggedAsUnsettled() {
        tx.begin();
        executor.execute(PAYOUT, "P-3", new Object[] {"x"}, () -> "paid");
        store.failComplete = true;
        tx.end(Completion.COMMITTED);

        assertThat(log(Level.SEVERE)).singleElement().satisfies(m -> assertThat(m)
                .contains("could not settle the outcome of Payouts.send key 'P-3'")
                .contains("(COMMITTED)"));
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
    }

    @Test
    void anIrreversibleOutcomeIsWrittenOutsideTheCallersTransaction() {
        tx.begin();
        executor.execute(PAYOUT, "P-4", new Object[] {"x"}, () -> "paid");
        tx.end(Completion.COMMITTED);

        assertThat(store.completedOutside).as("every write of a committed claim is its own").containsExactly(true);
        assertThat(status(PAYOUT, "P-4")).isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    @Test
    void aResultThatCannotBeEncodedInsideATransactionMarksItRollbackOnly() {
        ResultCodec refusing = new ResultCodec() {
            final JacksonResultCodec json = JacksonResultCodec.create();

            @Override
            public void checkReplayable(Type declaredType) {
            }

            @Override
            public byte[] encode(Object value, Type declaredType) {
                throw new IdempotencyReplayException("cannot encode " + value);
            }

            @Override
            public Object decode(byte[] data, Type declaredType) {
                return json.decode(data, declaredType);
            }
        };
        IdempotentExecutor encodingFails = IdempotentExecutor.builder(store).transactions(tx).codec(refusing).build();
        tx.begin();
        assertThatThrownBy(() -> encodingFails.execute(ORDER, "K-2", new Object[] {"K-2"}, () -> "order"))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("cannot encode order");
        assertThat(tx.rollbackOnly).as("the method's writes must not commit without their outcome").isTrue();
    }

    @Test
    void aCompensationThatFailsIsLoggedNeverThrown() {
        tx.begin();
        String result = executor.execute(ORDER, "K-3", new Object[] {"K-3"}, () -> "order", r -> {
            throw new IOException("refund endpoint down");
        });
        assertThatCode(() -> tx.end(Completion.ROLLED_BACK)).doesNotThrowAnyException();

        assertThat(result).isEqualTo("order");
        assertThat(logged).filteredOn(r -> r.getLevel() == Level.SEVERE).singleElement().satisfies(r -> {
            assertThat(r.getMessage()).contains("the compensation of Orders.create key 'K-3' failed");
            assertThat(r.getThrown()).hasMessage("refund endpoint down");
        });
    }

    // ---- the store is down and the operation proceeds unguarded -----------------------------------------------------

    @Test
    void anUnguardedCallThatThrowsInsideATransactionMarksItRollbackOnlyAndCarriesTheOutage() {
        store.down = true;
        tx.begin();
        IllegalStateException thrown = new IllegalStateException("cart full");

        assertThatThrownBy(() -> executor.execute(CART, "C-1", new Object[] {"C-1"}, () -> {
            assertThat(IdempotencyContext.current()).hasValueSatisfying(c -> assertThat(c.key()).isEqualTo("C-1"));
            throw thrown;
        }, r -> { })).isSameAs(thrown);

        assertThat(tx.rollbackOnly).isTrue();
        assertThat(thrown.getSuppressed()).singleElement().isInstanceOf(IdempotencyStoreException.class);
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
        assertThat(IdempotencyContext.current()).as("the call is over").isEmpty();
    }

    @Test
    void anUnguardedRunIsOverWhenItReturns() {
        store.down = true;
        assertThat(executor.execute(CART, "C-2", new Object[] {"C-2"}, () -> "added", r -> { })).isEqualTo("added");
        assertThat(IdempotencyContext.current()).isEmpty();
        assertThat(outcomes()).containsExactly(Outcome.UNGUARDED);
    }

    @Test
    void withoutACircuitBreakerAnUnguardedOperationWarnsAtMostOnceAMinute() {
        store.down = true;
        Runnable call = () -> executor.execute(CART, "C-3", new Object[] {"C-3"}, () -> "added", r -> { });

        call.run();
        assertThat(log(Level.WARNING)).singleElement()
                .satisfies(w -> assertThat(w).startsWith("Carts.add runs UNGUARDED"));
        clock.advance(Duration.ofSeconds(30));
        call.run();
        clock.advance(Duration.ofMillis(29_999));
        call.run();
        assertThat(log(Level.WARNING)).as("within the minute").hasSize(1);
        clock.advance(Duration.ofMillis(1));
        call.run();
        assertThat(log(Level.WARNING)).as("a minute after the first warning").hasSize(2);
        clock.advance(Duration.ofSeconds(59));
        call.run();
        assertThat(log(Level.WARNING)).hasSize(2);
        assertThat(outcomes()).containsOnly(Outcome.UNGUARDED).hasSize(5);
    }

    @Test
    void anUnguardedOutcomeThatCannotBeRecordedAfterCommitIsStillTheCallersResult() {
        tx.begin();
        assertThat(executor.execute(CART, "Q-1", new Object[] {"Q-1"}, () -> "added", r -> { })).isEqualTo("added");
        store.failComplete = true;
        tx.end(Completion.COMMITTED);

        assertThat(outcomes()).containsExactly(Outcome.UNGUARDED);
        assertThat(log(Level.WARNING)).singleElement()
                .satisfies(w -> assertThat(w).startsWith("Carts.add runs UNGUARDED"));
    }

    @Test
    void anUnguardedOperationWhoseOutcomeCannotBeRecordedReturnsItsResultAndWarns() {
        store.failComplete = true;
        assertThat(executor.execute(CART, "C-4", new Object[] {"C-4"}, () -> "added", r -> { })).isEqualTo("added");
        assertThat(outcomes()).containsExactly(Outcome.UNGUARDED);
        assertThat(log(Level.WARNING)).singleElement().satisfies(w -> assertThat(w).startsWith("Carts.add runs UNGUARDED"));
    }

    /** An argument Jackson cannot write. */
    public static final class Unwritable {
        public String getId() {
            throw new IllegalStateException("not loaded");
        }
    }

    @Test
    void anArgumentThatCannotBeFingerprintedIsAFailedCallThatNeverRuns() {
        assertThatThrownBy(() -> executor.execute(ORDER, "K-7", new Object[] {new Unwritable()},
                () -> "order-" + runs.incrementAndGet()))
                .isInstanceOf(IdempotencyException.class).hasMessageContaining("Orders.create");
        assertThat(runs).hasValue(0);
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
    }

    @Test
    void anIrreversibleAttemptWhoseOutcomeLandsAsItsLeaseRunsOutIsReplayedNotHeldForReview() {
        IdempotentOperation<String> payout = IdempotentOperation
                .builder("Payouts.late", Tier.IRREVERSIBLE, ResultType.of(String.class)).lease("6s").build();
        store.failComplete = true;
        assertThatThrownBy(() -> executor.execute(payout, "L-1", new Object[] {"L-1"}, () -> "paid"))
                .isInstanceOf(IdempotencyStoreException.class);
        store.failComplete = false;
        assertThat(status(payout, "L-1")).isEqualTo(IdempotencyRecord.Status.IN_FLIGHT);
        clock.advance(Duration.ofSeconds(7));
        // the first attempt's delayed write lands just before the review mark, which then finds nothing stale
        store.beforeReviewMark = keyHash -> {
            IdempotencyRecord late = store.find(keyHash).orElseThrow();
            store.complete(keyHash, late.leaseUntil(), "\"paid\"".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    clock.instant().plus(Duration.ofHours(1)));
        };
        events.clear();

        assertThat(executor.execute(payout, "L-1", new Object[] {"L-1"}, () -> "paid twice")).isEqualTo("paid");
        assertThat(outcomes()).containsExactly(Outcome.REPLAYED);
        assertThat(status(payout, "L-1")).isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    // ---- waiting for another attempt --------------------------------------------------------------------------------

    @Test
    void aDuplicateWaitingForAnAttemptThatFailsRunsItself() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch fail = new CountDownLatch(1);
        IdempotentExecutor plain = IdempotentExecutor.builder(store).build();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> assertThatThrownBy(() ->
                plain.execute(ORDER, "W-1", new Object[] {"W-1"}, () -> {
                    running.countDown();
                    fail.await(10, TimeUnit.SECONDS);
                    throw new IOException("first attempt failed");
                })).isInstanceOf(IOException.class));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() ->
                plain.execute(ORDER, "W-1", new Object[] {"W-1"}, () -> "second attempt"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (store.finds.get() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        fail.countDown();

        assertThat(duplicate.get(10, TimeUnit.SECONDS)).isEqualTo("second attempt");
        first.get(10, TimeUnit.SECONDS);
    }

    @Test
    void anInterruptedWaiterGivesUpAndKeepsItsInterrupt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        IdempotentExecutor plain = IdempotentExecutor.builder(store).build();
        CompletableFuture<String> owner = CompletableFuture.supplyAsync(() ->
                plain.execute(ORDER, "W-2", new Object[] {"W-2"}, () -> {
                    running.countDown();
                    return released(finish) ? "done" : "timed out";
                }));
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread waiter = new Thread(() -> {
                try {
                    plain.execute(ORDER, "W-2", new Object[] {"W-2"}, () -> "must not run");
                } catch (IdempotencyInProgressException e) {
                    stillInterrupted.set(Thread.currentThread().isInterrupted()
                            && e.getMessage().contains("interrupted while waiting"));
                }
            });
            waiter.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (store.finds.get() == 0 && waiter.isAlive() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            waiter.interrupt();
            waiter.join(10_000);
            assertThat(stillInterrupted).isTrue();

            // a caller interrupted before its turn with the store gives up as well
            IdempotentExecutor oneAtATime = IdempotentExecutor.builder(store).build();
            CountDownLatch inStore = new CountDownLatch(1);
            Thread queued = new Thread(() -> {
                try {
                    Thread.currentThread().interrupt();
                    oneAtATime.execute(ORDER, "W-2", new Object[] {"W-2"}, () -> "must not run");
                } catch (IdempotencyInProgressException e) {
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                }
                inStore.countDown();
            });
            stillInterrupted.set(false);
            queued.start();
            assertThat(inStore.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(stillInterrupted).isTrue();
        } finally {
            finish.countDown();
        }
        assertThat(owner.get(10, TimeUnit.SECONDS)).isEqualTo("done");
    }

    @Test
    void theStoreIsNeverAskedToWaitLongerThanWhatIsLeftOfTheLockTimeout() {
        order("K-4");
        order("K-4");
        assertThat(store.claims).hasSize(2).allSatisfy(r -> assertThat(r.lockTimeout())
                .isPositive().isLessThanOrEqualTo(ORDER.lockTimeout()));
    }

    @Test
    void anEventsTimesAreTheCallsOwn() {
        long before = System.nanoTime();
        order("K-5");
        Duration elapsed = Duration.ofNanos(System.nanoTime() - before);
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.totalTime()).isPositive().isLessThanOrEqualTo(elapsed);
            assertThat(e.claimTime()).isPositive().isLessThanOrEqualTo(e.totalTime());
        });
    }

    @Test
    void aScopeThatFailsIsAFailedCall() {
        IdempotentExecutor failing = IdempotentExecutor.builder(store).listener(events::add).scope(() -> {
            throw new IllegalStateException("no tenant in this thread");
        }).build();
        assertThatThrownBy(() -> failing.execute(ORDER, "K-6", new Object[] {"K-6"}, () -> "order"))
                .isInstanceOf(IllegalStateException.class);
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
    }

    @Test
    void aListenerThatThrowsIsLoggedAndTheCallAndTheOtherListenersGoOn() {
        IdempotentExecutor listened = IdempotentExecutor.builder(store).listener(e -> {
            throw new IllegalStateException("metrics backend down");
        }).listener(events::add).build();

        assertThat(listened.execute(ORDER, "K-8", new Object[] {"K-8"}, () -> "order")).isEqualTo("order");
        assertThat(outcomes()).containsExactly(Outcome.EXECUTED);
        assertThat(logged).filteredOn(r -> r.getLevel() == Level.WARNING).singleElement().satisfies(r -> {
            assertThat(r.getMessage()).contains("failed on");
            assertThat(r.getThrown()).hasMessage("metrics backend down");
        });
    }

    @Test
    void oneWaiterPerKeyIsAValidCap() {
        assertThatCode(() -> IdempotentExecutor.builder(store).maxWaitersPerKey(1).build())
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> IdempotentExecutor.builder(store).maxWaitersPerKey(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1, was 0");
    }

    private static boolean released(CountDownLatch latch) {
        try {
            return latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The in-memory store, with failures to switch on, and what the executor asked of it. */
    static final class Breakable extends ForwardingStore {
        volatile boolean down;
        volatile boolean failRelease;
        volatile boolean failMarkNeedsReview;
        volatile boolean failComplete;
        final List<ClaimRequest> claims = new CopyOnWriteArrayList<>();
        final List<Boolean> completedOutside = new CopyOnWriteArrayList<>();
        final AtomicInteger finds = new AtomicInteger();
        Transaction tx;
        volatile java.util.function.Consumer<byte[]> beforeReviewMark = keyHash -> { };

        Breakable(InMemoryIdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            if (down) {
                throw new IllegalStateException("Connection refused");
            }
            claims.add(request);
            return super.claim(request);
        }

        @Override
        public java.util.Optional<IdempotencyRecord> find(byte[] keyHash) {
            finds.incrementAndGet();
            return super.find(keyHash);
        }

        @Override
        public boolean release(byte[] keyHash, Instant leaseUntil) {
            if (failRelease) {
                throw new IllegalStateException("release refused");
            }
            return super.release(keyHash, leaseUntil);
        }

        @Override
        public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
            beforeReviewMark.accept(keyHash);
            return super.markNeedsReviewIfStale(keyHash, leaseUntil, now);
        }

        @Override
        public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
            if (failMarkNeedsReview) {
                throw new IllegalStateException("review refused");
            }
            return super.markNeedsReview(keyHash, leaseUntil);
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            if (failComplete) {
                throw new IllegalStateException("Connection reset");
            }
            completedOutside.add(tx != null && tx.outsideNow);
            return super.complete(keyHash, leaseUntil, result, expiresAt);
        }
    }
}
