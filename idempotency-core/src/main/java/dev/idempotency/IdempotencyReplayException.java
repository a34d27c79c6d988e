package dev.idempotency;

/**
 * A recorded result could not be turned back into the declared return type (a tampered or unreadable row, a type
 * outside the allow-list), or a result cannot be recorded at all. The method is never silently run again instead.
 */
public class IdempotencyReplayException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    public IdempotencyReplayException(String message) {
        super(message);
    }

    public IdempotencyReplayException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public Kind kind() {
        return Kind.REPLAY_FAILED;
    }
}
