package dev.idempotency.spring;

import dev.idempotency.TransactionBridge;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.ResourceHolderSupport;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link TransactionBridge} of Spring-managed transactions, on {@link TransactionSynchronizationManager}: the
 * executor sees the transaction of the {@code @Transactional} method (or {@code TransactionTemplate}) it runs in,
 * whatever the transaction manager.
 *
 * <ul>
 * <li><b>Active.</b> A transaction counts as active when transaction synchronization is active <em>and</em> an
 * actual transaction is open on this thread (not merely an empty {@code SUPPORTS} scope).</li>
 * <li><b>Completion.</b> Observed through a {@link TransactionSynchronization}: {@code STATUS_COMMITTED},
 * {@code STATUS_ROLLED_BACK} and {@code STATUS_UNKNOWN} (a commit whose reply was lost) are told apart. A savepoint
 * that existed before the registration and is rolled back to ({@code PROPAGATION_NESTED}, or the caller's own
 * savepoint) reports {@link TransactionBridge.Completion#ROLLED_BACK} at once, through Spring's {@code savepointRollback} callback: the
 * work done under it is gone even though the outer transaction goes on. It is reported just before the database
 * undoes the savepoint, so a compensation that writes to the database must do so in a transaction of its own
 * ({@code REQUIRES_NEW}).</li>
 * <li><b>Rollback-only.</b> The status of the innermost {@code @Transactional} method
 * ({@link TransactionAspectSupport#currentTransactionStatus()}) is marked, so that the method's own exception still
 * reaches the caller unchanged; without one (a {@code TransactionTemplate}), every transactional resource bound to
 * the thread is marked, which rolls the whole physical transaction back.</li>
 * <li><b>Outside.</b> Work that must commit on its own, whatever the caller's transaction does, runs on a thread of a
 * small shared pool, where no transaction and no transactional resource of the caller is visible (Spring binds them
 * to the thread): its store call takes a connection of its own. The caller waits for it. This needs a second pooled
 * connection while the caller's transaction holds one.</li>
 * </ul>
 */
public final class SpringTransactionBridge implements TransactionBridge {

    /** The one instance; it holds no state. */
    public static final SpringTransactionBridge INSTANCE = new SpringTransactionBridge();

    private static final ExecutorService OUTSIDE = Executors.newCachedThreadPool(new DaemonThreads());

    private SpringTransactionBridge() {
    }

    @Override
    public boolean isTransactionActive() {
        return TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive();
    }

    @Override
    public boolean isReadOnly() {
        return TransactionSynchronizationManager.isCurrentTransactionReadOnly();
    }

    /**
     * @throws IllegalStateException if no transaction is active ({@link #isTransactionActive()} is false)
     */
    @Override
    public void afterCompletion(CompletionCallback callback) {
        Objects.requireNonNull(callback, "callback");
        if (!isTransactionActive()) {
            throw new IllegalStateException("no Spring-managed transaction is active on this thread");
        }
        TransactionSynchronizationManager.registerSynchronization(new Completion(callback));
    }

    @Override
    public void setRollbackOnly() {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return;
        }
        try {
            TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
            return;
        } catch (NoTransactionException e) {
            // no @Transactional method on this thread (a TransactionTemplate): mark the physical transaction
        }
        for (Object resource : TransactionSynchronizationManager.getResourceMap().values()) {
            if (resource instanceof ResourceHolderSupport holder) {
                holder.setRollbackOnly();
            }
        }
    }

    @Override
    public <T> T outside(Supplier<T> work) {
        Objects.requireNonNull(work, "work");
        if (!TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.getResourceMap().isEmpty()) {
            return work.get();
        }
        Future<T> future = OUTSIDE.submit(work::get);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    // the work writes a claim or an outcome: abandoning it would lose track of what it wrote
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    if (cause instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "SpringTransactionBridge";
    }

    /** Tells one callback, once, how the work registered with it ended. */
    private static final class Completion implements TransactionSynchronization {
        private final CompletionCallback callback;
        /**
         * The savepoints set after this registration: rolling back to one of them leaves our work in place. Made on
         * the first one (most transactions set none; an empty identity set is some 350 bytes per call).
         */
        private @Nullable Set<Object> laterSavepoints;
        private boolean told;

        Completion(CompletionCallback callback) {
            this.callback = callback;
        }

        @Override
        public void savepoint(Object savepoint) {
            if (laterSavepoints == null) {
                laterSavepoints = Collections.newSetFromMap(new IdentityHashMap<>());
            }
            laterSavepoints.add(savepoint);
        }

        @Override
        public void savepointRollback(Object savepoint) {
            if (laterSavepoints == null || !laterSavepoints.remove(savepoint)) {
                tell(TransactionBridge.Completion.ROLLED_BACK);
            }
        }

        @Override
        public void afterCompletion(int status) {
            tell(switch (status) {
                case STATUS_COMMITTED -> TransactionBridge.Completion.COMMITTED;
                case STATUS_ROLLED_BACK -> TransactionBridge.Completion.ROLLED_BACK;
                default -> TransactionBridge.Completion.UNKNOWN;
            });
        }

        private void tell(TransactionBridge.Completion completion) {
            if (!told) {
                told = true;
                callback.completed(completion);
            }
        }
    }

    private static final class DaemonThreads implements java.util.concurrent.ThreadFactory {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "idempotency-outside-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
