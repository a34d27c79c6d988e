package dev.idempotency.spring;

/** A business decision worth replaying: the same request gets the same refusal. */
public class InsufficientFundsException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public InsufficientFundsException(String message) {
        super(message);
    }
}
