package dev.idempotency.store.tck;

import dev.idempotency.TransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The in-memory store passes the whole TCK. It never joins a transaction; the "transactions" here are a minimal
 * stand-in that only tells the executor when they end, so the transactional layer exercises the executor's other
 * path: a store outside the transaction, whose result is held in flight until the commit and released on rollback.
 */
class InMemoryIdempotencyStoreTckTest extends AbstractStoreTransactionTest {

    /** The completion callbacks of this thread's open transaction; null when none is open. */
    private static final ThreadLocal<List<TransactionBridge.CompletionCallback>> OPEN = new ThreadLocal<>();

    @Override
    protected IdempotencyStore createStore() {
        return new InMemoryIdempotencyStore();
    }

    @Override
    protected TransactionBridge transactionBridge() {
        return new TransactionBridge() {
            @Override
            public boolean isTransactionActive() {
                return OPEN.get() != null;
            }

            @Override
            public void afterCompletion(CompletionCallback callback) {
                OPEN.get().add(callback);
            }
        };
    }

    @Override
    protected <T> T inTransaction(Supplier<T> work) {
        T result;
        OPEN.set(new ArrayList<>());
        try {
            result = work.get();
        } catch (RuntimeException | Error e) {
            end(false);
            throw e;
        }
        end(true);
        return result;
    }

    @Override
    protected void inRolledBackTransaction(Runnable work) {
        OPEN.set(new ArrayList<>());
        try {
            work.run();
        } finally {
            end(false);
        }
    }

    private static void end(boolean committed) {
        List<TransactionBridge.CompletionCallback> callbacks = OPEN.get();
        OPEN.remove();
        callbacks.forEach(c -> c.completed(committed ? TransactionBridge.Completion.COMMITTED : TransactionBridge.Completion.ROLLED_BACK));
    }
}
