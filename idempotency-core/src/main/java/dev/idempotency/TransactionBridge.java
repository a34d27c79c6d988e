package dev.idempotency;

import java.util.function.Supplier;

/**
 * What the executor needs to know of the caller's transaction, supplied by a framework module (the Spring module
 * implements it on {@code TransactionSynchronizationManager}). Core itself knows no transaction manager.
 *
 * <p>It lets a store that cannot join the transaction (the in-memory store, a store on another database) keep a
 * result in flight until the caller's transaction commits, and release it if it rolls back, so that a duplicate never
 * replays a result whose writes were undone. It tells the three ways a transaction can end apart
 * ({@link Completion}): a savepoint rolled back counts as a rollback for whatever was registered inside it, and a
 * commit whose reply was lost is {@link Completion#UNKNOWN}, never a rollback.
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

        @Override
        public String toString() {
            return "TransactionBridge.NONE";
        }
    };

    /** Whether a transaction whose end can be observed is active on this thread. */
    boolean isTransactionActive();

    /** Whether the active transaction is read-only (a claim cannot be written in it). */
    default boolean isReadOnly() {
        return false;
    }

    /**
     * Runs {@code callback} exactly once, when the work done so far on this thread's transaction scope has met its
     * fate: {@link Completion#ROLLED_BACK} as soon as a savepoint that was set before this registration is rolled
     * back to (the outer transaction goes on, but everything done since that savepoint is gone), otherwise how the
     * transaction ended.
     */
    void afterCompletion(CompletionCallback callback);

    /**
     * Marks the active transaction scope so that it can only roll back: the executor calls it when the fate of the
     * method's writes and of its claim would otherwise part (a checked exception that the transaction's rules would
     * commit, a deadlock after which the database already rolled back). Does nothing without a transaction.
     */
    default void setRollbackOnly() {
    }

    /**
     * Runs {@code work} where no transaction of this thread is visible, so that what it writes commits on its own at
     * once, whatever the caller's transaction does later (the durable intent of an {@link Tier#IRREVERSIBLE} call,
     * and reads that must see the latest committed state rather than the transaction's snapshot). Without a
     * transaction it simply runs {@code work}.
     */
    default <T> T outside(Supplier<T> work) {
        return work.get();
    }

    /** How the work of a transaction scope ended. */
    enum Completion {
        /** The transaction committed. */
        COMMITTED,
        /** The transaction, or the savepoint the work was done under, rolled back. */
        ROLLED_BACK,
        /** The commit was sent but its outcome is unknown (the reply was lost): it may have committed. */
        UNKNOWN
    }

    /** Told how a transaction ended. */
    @FunctionalInterface
    interface CompletionCallback {
        void completed(Completion completion);
    }
}
