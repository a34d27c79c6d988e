package dev.idempotency;

import java.util.Objects;

/**
 * Who resolves a key by hand, and why: every resolution through {@link IdempotencyAdmin} ({@code release},
 * {@code resolveExecuted}, {@code evict}) requires one, and its audit ({@link dev.idempotency.store.IdempotencyAudit})
 * records it beside the key, the action and the instant.
 *
 * <pre>{@code
 * admin.release("Payments.refund", "REFUND:R-1", new ResolvedBy("alice", "gateway statement shows no payout"));
 * }</pre>
 *
 * @param actor  who decided: an authenticated principal's name, never a value a caller of the application chose
 *               (at most {@value #MAX_ACTOR} characters, no control characters)
 * @param reason why: what the operator checked (at most {@value #MAX_REASON} characters)
 */
public record ResolvedBy(String actor, String reason) {

    /** The longest actor name accepted. */
    public static final int MAX_ACTOR = 255;
    /** The longest reason accepted. */
    public static final int MAX_REASON = 1000;

    /**
     * @throws IllegalArgumentException if the actor or the reason is blank or too long, or the actor holds a control
     *                                  character
     */
    public ResolvedBy {
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(reason, "reason");
        if (actor.isBlank()) {
            throw new IllegalArgumentException("a resolution needs an actor: who decided it (an authenticated name)");
        }
        if (actor.length() > MAX_ACTOR || actor.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("the actor of a resolution is at most " + MAX_ACTOR
                    + " characters without control characters, was '" + actor.replaceAll("\\p{Cntrl}", "?") + "'");
        }
        if (reason.isBlank()) {
            throw new IllegalArgumentException("a resolution by " + actor + " needs a reason: what was checked");
        }
        if (reason.length() > MAX_REASON) {
            throw new IllegalArgumentException("the reason of a resolution by " + actor + " is at most " + MAX_REASON
                    + " characters, was " + reason.length());
        }
    }
}
