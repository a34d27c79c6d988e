package dev.idempotency;

import java.util.List;

/**
 * Consulted before the first execution of an {@link Tier#IRREVERSIBLE} call (never on a replay). To refuse, throw
 * {@link ConfirmationRequiredException} carrying the key; the claim is released, and the same call resent with its
 * confirmation (an {@link IdempotencyIgnore} parameter, so the fingerprint still matches) is asked again.
 */
@FunctionalInterface
public interface ConfirmationGate {

    /**
     * @throws ConfirmationRequiredException to refuse this execution until it is confirmed
     */
    void check(Call call);

    /**
     * The call about to run for the first time.
     *
     * @param operation the operation name
     * @param key       the idempotency key
     * @param arguments every argument, ignored ones included (that is where a confirmation travels)
     */
    record Call(String operation, String key, List<Object> arguments) {
    }
}
