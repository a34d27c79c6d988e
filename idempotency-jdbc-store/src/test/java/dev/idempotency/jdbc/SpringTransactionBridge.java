package dev.idempotency.jdbc;

import dev.idempotency.TransactionBridge;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The bridge the Spring module supplies in production, reduced to what these tests need. With a transaction manager,
 * {@link #outside} suspends the caller's transaction (PROPAGATION_NOT_SUPPORTED), so that the store works on a
 * connection of its own and reads the latest committed rows, as the production bridge does; without one it runs the
 * work in place.
 */
final class SpringTransactionBridge implements TransactionBridge {

    private final @Nullable TransactionTemplate notSupported;

    SpringTransactionBridge() {
        this.notSupported = null;
    }

    SpringTransactionBridge(PlatformTransactionManager transactions) {
        this.notSupported = new TransactionTemplate(transactions);
        this.notSupported.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
    }

    @Override
    public boolean isTransactionActive() {
        return TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.isSynchronizationActive();
    }

    @Override
    public void afterCompletion(CompletionCallback callback) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                callback.completed(status == STATUS_COMMITTED ? Completion.COMMITTED
                        : status == STATUS_ROLLED_BACK ? Completion.ROLLED_BACK : Completion.UNKNOWN);
            }
        });
    }

    @Override
    public <T> T outside(Supplier<T> work) {
        if (notSupported == null || !isTransactionActive()) {
            return work.get();
        }
        return notSupported.execute(status -> work.get());
    }
}
