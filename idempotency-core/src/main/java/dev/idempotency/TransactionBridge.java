package dev.idempotency;

/**
 * What the executor needs to know of the caller's transaction, supplied by a framework module (the Spring module
 * implements it on {@code TransactionSynchronizationManager}). Core itself knows no transaction manager.
 *
 * <p>It lets a store that cannot join the transaction (the in-memory store, a store on another database) keep a
 * result in flight until the caller's transaction commits, and release it if it rolls back, so that a duplicate never
 * replays a result whose writes were undone.
 */
public interface TransactionBridge {

    /** No transactions: every call completes at once. */
    TransactionBridge NONE = new TransactionBridge() {
        @Override
        public boolean isTransactionActive() {
            return false;
        }

        @Override
        public void afterCompletion(CompletionCallback callback) {
            throw new IllegalStateException("no transaction is active");
        }
    };

    /** Whether a transaction whose end can be observed is active on this thread. */
    boolean isTransactionActive();

    /** Runs {@code callback} once the active transaction has ended, with whether it committed. */
    void afterCompletion(CompletionCallback callback);

    /** Told how a transaction ended. */
    @FunctionalInterface
    interface CompletionCallback {
        void completed(boolean committed);
    }
}
