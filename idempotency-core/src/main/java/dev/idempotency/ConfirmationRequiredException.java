package dev.idempotency;

/**
 * A {@link ConfirmationGate} refused the first execution of an {@link Tier#IRREVERSIBLE} call until it is confirmed.
 * Nothing was stored. Resend the same call, with the same key and its confirmation in an {@link IdempotencyIgnore}
 * parameter, and it runs. An MCP server answers this with {@code input_required}.
 */
public class ConfirmationRequiredException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final String operation;
    private final String key;

    public ConfirmationRequiredException(String operation, String key, String message) {
        super(message);
        this.operation = operation;
        this.key = key;
    }

    public String operation() {
        return operation;
    }

    /** The idempotency key the confirmation must be sent with. */
    public String key() {
        return key;
    }
}
