package dev.idempotency;

/**
 * The key could not be made: the expression yielded null, an empty or blank string, more than 1,024 characters or
 * a control character, or failed to evaluate. The message names the method and the expression; the method did not
 * run and nothing was stored.
 */
public class IdempotencyKeyException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    public IdempotencyKeyException(String message) {
        super(message);
    }

    public IdempotencyKeyException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public Kind kind() {
        return Kind.INVALID_KEY;
    }
}
