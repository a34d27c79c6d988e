package dev.idempotency;

import java.time.Duration;

/**
 * Another attempt with the same key is still running and did not finish within the lock timeout. The method did not
 * run. Retrying later replays that attempt's outcome. The HTTP analogue is 409.
 */
public class IdempotencyInProgressException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    public IdempotencyInProgressException(String operation, String key, Duration waited) {
        this(operation, key, "another attempt with idempotency key '" + key + "' of operation " + operation
                + " is still in flight after waiting " + waited + "; retry later to get its outcome", null);
    }

    public IdempotencyInProgressException(String operation, String key, String message, Throwable cause) {
        super(message, cause, operation, key);
    }

    @Override
    public Kind kind() {
        return Kind.IN_PROGRESS;
    }
}
