package dev.idempotency;

/**
 * The key was already used with other arguments (the payload fingerprint differs). The HTTP analogue is 422.
 * The message names the operation and the key, never the payload, which may hold personal data.
 */
public class IdempotencyKeyReusedException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final String operation;
    private final String key;

    public IdempotencyKeyReusedException(String operation, String key) {
        super("Idempotency key '" + key + "' of operation " + operation
                + " was already used with different arguments; use a new key for a new request");
        this.operation = operation;
        this.key = key;
    }

    public String operation() {
        return operation;
    }

    public String key() {
        return key;
    }
}
