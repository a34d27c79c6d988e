package dev.idempotency;

/**
 * The key was already used with other arguments (the payload fingerprint differs). The HTTP analogue is 422.
 * The message names the operation and the key, never the payload, which may hold personal data.
 */
public class IdempotencyKeyReusedException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    public IdempotencyKeyReusedException(String operation, String key) {
        super("Idempotency key '" + key + "' of operation " + operation
                + " was already used with different arguments; use a new key for a new request",
                null, operation, key);
    }

    @Override
    public Kind kind() {
        return Kind.KEY_REUSED;
    }
}
