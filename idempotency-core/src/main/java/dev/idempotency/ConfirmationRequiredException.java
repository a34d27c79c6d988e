package dev.idempotency;

/**
 * A {@link ConfirmationGate} refused the first execution of an {@link Tier#IRREVERSIBLE} call until it is confirmed.
 * Nothing was stored. Resend the same call, with the same key and its confirmation in an {@link IdempotencyIgnore}
 * parameter, and it runs. An MCP server answers this with {@code input_required}.
 */
public class ConfirmationRequiredException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    /** @param key the idempotency key the confirmation must be sent with */
    public ConfirmationRequiredException(String operation, String key, String message) {
        super(message, null, operation, key);
    }

    @Override
    public Kind kind() {
        return Kind.CONFIRMATION_REQUIRED;
    }
}
