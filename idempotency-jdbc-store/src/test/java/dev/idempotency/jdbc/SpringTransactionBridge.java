package dev.idempotency.jdbc;

import dev.idempotency.TransactionBridge;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** The bridge the Spring module supplies in production, reduced to what these tests need. */
final class SpringTransactionBridge implements TransactionBridge {

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
}
