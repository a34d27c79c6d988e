package dev.idempotency.spring.internal;

import java.util.Objects;
import org.springframework.transaction.support.TransactionOperations;

/**
 * Runs a call that may throw a checked exception inside a transaction ({@link TransactionOperations}, usually a
 * {@code TransactionTemplate}), and lets whatever the call throws reach the caller unchanged: the same instance,
 * checked or not. A {@code TransactionTemplate} callback can throw only unchecked exceptions; a checked one is carried
 * out of it in a private wrapper, which the template sees as any runtime exception (it rolls the transaction back),
 * and unwrapped here. A way in that opens the transaction of the call it guards (the HTTP adapter for a
 * {@code @Transactional} handler, the listener advice with a transaction manager) uses this one wrapper.
 */
public final class TransactionalCall {

    private TransactionalCall() {
    }

    /**
     * A call that returns a value or throws.
     *
     * @param <T> what it returns
     * @param <E> what it may throw
     */
    @FunctionalInterface
    public interface Body<T, E extends Throwable> {
        T call() throws E;
    }

    /**
     * Runs {@code body} in a transaction of {@code transactions}: committed when it returns, rolled back when it
     * throws (anything, as {@code TransactionTemplate} rolls back on any runtime exception or error).
     *
     * @param transactions the transaction to run in; {@link TransactionOperations#withoutTransaction()} for none
     * @param body         the call
     * @return what {@code body} returned (null only if it returned null)
     * @throws E whatever {@code body} threw, unchanged
     */
    public static <T, E extends Throwable> T run(TransactionOperations transactions, Body<T, E> body) throws E {
        Objects.requireNonNull(body, "body");
        try {
            return transactions.execute(status -> {
                try {
                    return body.call();
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new Checked(e);
                }
            });
        } catch (Checked e) {
            throw e.<E>original();
        }
    }

    /** A checked exception of the call, carried out of the transaction callback. */
    private static final class Checked extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Checked(Throwable cause) {
            super(null, cause, false, false);
        }

        /** The call's exception: of type {@code E}, as {@code body} declares; nothing else is wrapped. */
        @SuppressWarnings("unchecked")
        <E extends Throwable> E original() {
            return (E) Objects.requireNonNull(getCause());
        }
    }
}
