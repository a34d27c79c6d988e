package dev.idempotency;

/**
 * An {@link Tier#IRREVERSIBLE} call was claimed and its lease ran out without an outcome (a crash): whether the side
 * effect happened is unknown. The record is marked {@code NEEDS_REVIEW} and every call with this key fails with this
 * exception until an operator resolves it through {@link IdempotencyAdmin}.
 */
public class IdempotencyOutcomeUnknownException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    public IdempotencyOutcomeUnknownException(String operation, String key) {
        super("the outcome of operation " + operation + " with idempotency key '" + key
                + "' is unknown (an attempt started and never finished); it needs review by an operator"
                + " (IdempotencyAdmin.resolveExecuted or IdempotencyAdmin.release) before it can run or replay",
                null, operation, key);
    }

    @Override
    public Kind kind() {
        return Kind.OUTCOME_UNKNOWN;
    }
}
