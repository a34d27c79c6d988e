package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idempotency.TransactionBridge.Completion;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The executor's rules at the edges of the caller's transaction, on a store that cannot join it (the in-memory store),
 * with a transaction the test ends as it likes: committed, rolled back (or rolled back to a savepoint), or with its
 * outcome unknown.
 */
class TransactionEdgesTest {

    static final IdempotentOperation<String> ORDER = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).lockTimeout("300ms").build();
    static final IdempotentOperation<String> PAYOUT = IdempotentOperation
            .builder("Payouts.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).lockTimeout("300ms").build();

    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final Transaction tx = new Transaction();
    final IdempotentExecutor executor = IdempotentExecutor.builder(store).transactions(tx).build();
    final AtomicInteger runs = new AtomicInteger();
    final List<String> compensated = new ArrayList<>();

    private String order(String id) {
        return executor.execute(ORDER, id, new Object[] {id}, () -> "order-" + id + "-" + runs.incrementAndGet(),
                compensated::add);
    }

    private Status status(IdempotentOperation<?> op, String key) {
        return store.find(Keys.hash(op.name(), "", key)).map(IdempotencyRecord::status).orElse(null);
    }

    @Test
    void anUnknownCommitNeitherReleasesNorCompensates() {
        tx.begin();
        String first = order("U-1");
        tx.end(Completion.UNKNOWN);
        assertThat(compensated).as("the writes may be committed: nothing is undone").isEmpty();
        assertThat(status(ORDER, "U-1")).as("not released: a retry must not run at once").isEqualTo(Status.IN_FLIGHT);
        assertThatThrownBy(() -> order("U-1")).isInstanceOf(IdempotencyInProgressException.class);
        assertThat(runs).hasValue(1);
        assertThat(first).isEqualTo("order-U-1-1");
    }

    @Test
    void aRollbackReleasesAndCompensatesOnce() {
        tx.begin();
        order("R-1");
        tx.end(Completion.ROLLED_BACK);
        assertThat(compensated).containsExactly("order-R-1-1");
        assertThat(status(ORDER, "R-1")).isNull();
        assertThat(order("R-1")).isEqualTo("order-R-1-2");
    }

    @Test
    void anExceptionInsideATransactionMarksItRollbackOnlyAndReleases() {
        tx.begin();
        assertThatThrownBy(() -> executor.execute(ORDER, "C-1", new Object[0], () -> {
            throw new IOException("checked");
        })).isInstanceOf(IOException.class);
        assertThat(tx.rollbackOnly).as("its partial writes must not commit without the claim").isTrue();
        assertThat(status(ORDER, "C-1")).isNull();
    }

    @Test
    void aStoreFailureThatAbortedTheTransactionPassesUnwrappedAndMarksItRollbackOnly() {
        class Deadlock extends RuntimeException implements CallerTransactionAborted {
            Deadlock() {
                super("deadlock victim");
            }
        }
        IdempotentExecutor aborting = IdempotentExecutor.builder(new ForwardingStore(store) {
            @Override
            public ClaimResult claim(ClaimRequest request) {
                throw new Deadlock();
            }
        }).transactions(tx).build();
        tx.begin();
        assertThatThrownBy(() -> aborting.execute(ORDER, "D-1", new Object[0], () -> "never"))
                .isExactlyInstanceOf(Deadlock.class);
        assertThat(tx.rollbackOnly).isTrue();
    }

    @Test
    void anIrreversibleClaimIsWrittenOutsideTheCallersTransactionAndHeldForReviewWhenItRollsBack() {
        tx.begin();
        String paid = executor.execute(PAYOUT, "P-1", new Object[0], () -> {
            assertThat(tx.outsideCalls).as("the intent was made durable outside, before the effect").isPositive();
            return "paid";
        });
        assertThat(paid).isEqualTo("paid");
        tx.end(Completion.ROLLED_BACK);
        assertThat(status(PAYOUT, "P-1")).isEqualTo(Status.NEEDS_REVIEW);
        assertThatThrownBy(() -> executor.execute(PAYOUT, "P-1", new Object[0], () -> "paid twice"))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
    }

    @Test
    void anIrreversibleCallWithAnUnknownCommitIsHeldForReview() {
        tx.begin();
        executor.execute(PAYOUT, "P-2", new Object[0], () -> "paid");
        tx.end(Completion.UNKNOWN);
        assertThat(status(PAYOUT, "P-2")).isEqualTo(Status.NEEDS_REVIEW);
    }

    @Test
    void aClaimInsideAReadOnlyTransactionFailsBeforeTheMethodRuns() {
        tx.begin();
        tx.readOnly = true;
        assertThatThrownBy(() -> order("RO-1")).isExactlyInstanceOf(IdempotencyException.class)
                .hasMessageContaining("Orders.create").hasMessageContaining("read-only");
        assertThat(runs).hasValue(0);
        assertThat(status(ORDER, "RO-1")).isNull();
    }

    @Test
    void aLeaseIsRenewedWhileTheMethodRunsSoThatNoDuplicateTakesItOver() throws Exception {
        IdempotentOperation<String> slow = IdempotentOperation
                .builder("Reports.build", Tier.REVERSIBLE, ResultType.of(String.class))
                .lockTimeout("100ms").lease(Duration.ofMillis(150)).build();
        IdempotentExecutor plain = IdempotentExecutor.builder(store).build();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> plain.execute(slow, "S-1",
                new Object[0], () -> {
                    runs.incrementAndGet();
                    started.countDown();
                    waitFor(finish);
                    return "built";
                }));
        assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
        Instant claimed = store.find(Keys.hash(slow.name(), "", "S-1")).orElseThrow().leaseUntil();
        // well past the first lease: it has been renewed, and a duplicate still finds the call in flight
        await().atMost(Duration.ofSeconds(5)).until(() -> store.find(Keys.hash(slow.name(), "", "S-1"))
                .orElseThrow().leaseUntil().isAfter(claimed.plusMillis(500)));
        assertThatThrownBy(() -> plain.execute(slow, "S-1", new Object[0], () -> "ran twice"))
                .isInstanceOf(IdempotencyInProgressException.class);
        finish.countDown();
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("built");
        assertThat(plain.execute(slow, "S-1", new Object[0], () -> "ran twice")).isEqualTo("built");
        assertThat(runs).hasValue(1);
    }

    @Test
    void aTakeOverTheStoresClockRefusesIsWaitedOutNotRetriedInALoop() {
        AtomicInteger takeOvers = new AtomicInteger();
        // a node whose clock runs an hour ahead: every live claim looks stale to it; the store's clock says no
        IdempotentExecutor ahead = IdempotentExecutor.builder(new ForwardingStore(store) {
            @Override
            public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
                takeOvers.incrementAndGet();
                return ClaimResult.existing(observed);
            }
        }).clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofHours(1))).build();
        IdempotentExecutor here = IdempotentExecutor.builder(store).build();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<String> owner = CompletableFuture.supplyAsync(() -> here.execute(ORDER, "K-1",
                new Object[0], () -> {
                    started.countDown();
                    waitFor(finish);
                    return "mine";
                }));
        await().atMost(Duration.ofSeconds(5)).until(() -> started.getCount() == 0);
        assertThatThrownBy(() -> ahead.execute(ORDER, "K-1", new Object[0], () -> "stolen"))
                .isInstanceOf(IdempotencyInProgressException.class);
        // one try per wait (5 ms doubling to 250 ms within 300 ms): a handful, never a busy loop
        assertThat(takeOvers.get()).isBetween(1, 10);
        finish.countDown();
        assertThat(owner.join()).isEqualTo("mine");
        assertThat(ahead.execute(ORDER, "K-1", new Object[0], () -> "stolen")).isEqualTo("mine");
    }

    private static void waitFor(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A transaction the test ends; work "outside" it is counted (the in-memory store never joins anyway). */
    static final class Transaction implements TransactionBridge {
        private final List<CompletionCallback> callbacks = new ArrayList<>();
        private boolean active;
        boolean readOnly;
        boolean rollbackOnly;
        int outsideCalls;
        /** Whether work is running outside the transaction now (what a store sees when it is called). */
        boolean outsideNow;

        void begin() {
            active = true;
        }

        void end(Completion completion) {
            active = false;
            List<CompletionCallback> run = new ArrayList<>(callbacks);
            callbacks.clear();
            run.forEach(c -> c.completed(completion));
        }

        @Override
        public boolean isTransactionActive() {
            return active;
        }

        @Override
        public boolean isReadOnly() {
            return readOnly;
        }

        @Override
        public void afterCompletion(CompletionCallback callback) {
            callbacks.add(callback);
        }

        @Override
        public void setRollbackOnly() {
            rollbackOnly = true;
        }

        @Override
        public <T> T outside(Supplier<T> work) {
            outsideCalls++;
            boolean was = outsideNow;
            outsideNow = true;
            try {
                return work.get();
            } finally {
                outsideNow = was;
            }
        }
    }
}
