package dev.idempotency.spring;

import dev.idempotency.TransactionBridge;
import java.util.Objects;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link TransactionBridge} of Spring-managed transactions, on {@link TransactionSynchronizationManager}: the
 * executor sees the transaction of the {@code @Transactional} method (or {@code TransactionTemplate}) it runs in,
 * whatever the transaction manager.
 *
 * <p>A transaction counts as active when transaction synchronization is active <em>and</em> an actual transaction
 * is open on this thread (not merely an empty {@code SUPPORTS} scope). Its end is observed through a
 * {@link TransactionSynchronization}, which reports {@code committed} only for {@code STATUS_COMMITTED}: an
 * unknown outcome ({@code STATUS_UNKNOWN}) counts as not committed, so that the claim is released rather than a
 * result replayed whose writes may be gone.
 */
public final class SpringTransactionBridge implements TransactionBridge {

    /** The one instance; it holds no state. */
    public static final SpringTransactionBridge INSTANCE = new SpringTransactionBridge();

    private SpringTransactionBridge() {
    }

    @Override
    public boolean isTransactionActive() {
        return TransactionSynchronizationManager.isSynchronizationActive()
                && TransactionSynchronizationManager.isActualTransactionActive();
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
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
                callback.completed(status == STATUS_COMMITTED ? Completion.COMMITTED
                        : status == STATUS_ROLLED_BACK ? Completion.ROLLED_BACK : Completion.UNKNOWN);
            }
        });
    }

    @Override
    public String toString() {
        return "SpringTransactionBridge";
    }
}
