package dev.idempotency;

/** The root of every exception this library throws. Unchecked: a caller decides which ones it maps, and how. */
public class IdempotencyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public IdempotencyException(String message) {
        super(message);
    }

    public IdempotencyException(String message, Throwable cause) {
        super(message, cause);
    }
}
