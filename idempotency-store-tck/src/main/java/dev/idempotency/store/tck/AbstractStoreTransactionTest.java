package dev.idempotency.store.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Layer 5 of the store TCK: calls inside the caller's transactions. The subclass says how to run a block in a
 * transaction and how the executor sees it ({@link #transactionBridge()}); a store that joins the transaction writes
 * the claim there, one that does not has the executor defer the result to the commit. Either way a rolled-back call
 * leaves nothing behind, and the fuzz holds inside outer transactions.
 */
public abstract class AbstractStoreTransactionTest extends AbstractStoreConcurrencyTest {

    /** Runs {@code work} in a new transaction that commits when it returns (and rolls back when it throws). */
    protected abstract <T> T inTransaction(Supplier<T> work);

    /** Runs {@code work} in a new transaction that is rolled back after it returns. */
    protected abstract void inRolledBackTransaction(Runnable work);

    /** The bridge through which the executor sees the transactions of {@link #inTransaction(Supplier)}. */
    @Override
    protected abstract TransactionBridge transactionBridge();

    @Test
    void aCallWhoseTransactionRolledBackLeavesNothingAndItsRetryRuns() {
        IdempotentExecutor executor = executor();
        IdempotentOperation<String> op = IdempotentOperation
                .builder("TCK.tx", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        AtomicInteger runs = new AtomicInteger();
        inRolledBackTransaction(() -> assertThat(executor.execute(op, key("T"), new Object[0],
                () -> "run-" + runs.incrementAndGet())).isEqualTo("run-1"));
        assertThat(store.find(Keys.hash("TCK.tx", "", key("T")))).isEmpty();

        String committed = inTransaction(() -> executor.execute(op, key("T"), new Object[0],
                () -> "run-" + runs.incrementAndGet()));
        assertThat(committed).isEqualTo("run-2");
        assertThat(inTransaction(() -> executor.execute(op, key("T"), new Object[0], () -> "no"))).isEqualTo("run-2");
        assertThat(executor.execute(op, key("T"), new Object[0], () -> "no")).isEqualTo("run-2");
        assertThat(runs).hasValue(2);
    }

    @Test
    void renewWorksInsideAndOutsideTransactions() {
        // claimed, renewed and completed inside one transaction
        ClaimRequest inside = request(key("renew-inside"));
        Instant renewed = inside.leaseUntil().plusSeconds(30);
        inTransaction(() -> {
            assertThat(store.claim(inside).isAcquired()).isTrue();
            assertThat(store.renew(inside.keyHash(), inside.leaseUntil(), renewed)).isTrue();
            assertThat(store.complete(inside.keyHash(), inside.leaseUntil(), new byte[] {1}, now().plusSeconds(60)))
                    .isFalse();
            return store.complete(inside.keyHash(), renewed, new byte[] {2}, now().plusSeconds(60));
        });
        assertThat(store.find(inside.keyHash()).orElseThrow().result()).containsExactly(2);

        // claimed without a transaction, renewed inside one that commits, completed outside
        ClaimRequest outside = request(key("renew-outside"));
        assertThat(store.claim(outside).isAcquired()).isTrue();
        assertThat(inTransaction(() -> store.renew(outside.keyHash(), outside.leaseUntil(), renewed))).isTrue();
        assertThat(store.find(outside.keyHash())).contains(outside.withLeaseUntil(renewed).toInFlightRecord());
        assertThat(store.renew(outside.keyHash(), renewed, renewed.plusSeconds(30))).isTrue();
        assertThat(store.complete(outside.keyHash(), renewed.plusSeconds(30), new byte[] {3}, now().plusSeconds(60)))
                .isTrue();
        assertThat(inTransaction(() -> store.renew(outside.keyHash(), renewed.plusSeconds(30),
                renewed.plusSeconds(60)))).isFalse();
    }

    @Test
    void fuzzInsideOuterTransactionsEveryKeyRunsOnceAndEveryCallerGetsTheSameResult() throws Exception {
        fuzz(this::inTransaction);
    }
}
