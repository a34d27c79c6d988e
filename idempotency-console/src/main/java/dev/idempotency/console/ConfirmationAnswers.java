package dev.idempotency.console;

import dev.idempotency.ResolvedBy;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The confirmation answers recorded for a key (MCP elicitation or {@code input_required}): what the key page shows of
 * an MCP call. The console sees them through this interface only, so that it needs {@code idempotency-mcp} only when
 * the application has it ({@link McpConfirmationAnswers}).
 */
interface ConfirmationAnswers {

    /** Whether the application records confirmation answers at all (it has the confirmation gate). */
    boolean available();

    /**
     * Every principal's answers to {@code key} of {@code operation}, the oldest first.
     *
     * @throws RuntimeException if they cannot be read (the store failed)
     */
    List<Answer> answers(String operation, String key);

    /**
     * The scope under which the executor stored the calls of {@code principal}: what the key page needs to find an
     * MCP call's record, which the store keeps without its scope.
     */
    String scopeOf(String principal);

    /**
     * Whether calls can wait for an approver: the gate gives confirmation tokens to clients without elicitation
     * ({@code McpConfirmations.Builder.tokens(true)}). False unless a source says otherwise.
     */
    default boolean approvals() {
        return false;
    }

    /**
     * The calls waiting for an approver, the oldest first, at most {@code limit}.
     *
     * @throws RuntimeException if they cannot be read (the store failed)
     */
    default List<Waiting> waiting(int limit) {
        return List.of();
    }

    /**
     * Records {@code by}'s approval of the waiting call: its client's call sent again with its token then runs once.
     *
     * @throws IllegalArgumentException if {@code by} is the call's own principal
     * @throws IllegalStateException    if no such call waits (it ran, its token expired, other arguments)
     */
    default void approve(String principal, String operation, String key, String argumentDigest, ResolvedBy by) {
        throw new IllegalStateException("approve(" + operation + ", '" + key + "'): these answers come without"
                + " approvals: no call waits for an approver");
    }

    /**
     * A call waiting for an approver.
     *
     * @param principal      the MCP principal that made the call ({@code ""} on stdio)
     * @param tool           the tool's name
     * @param operation      the operation of its key
     * @param key            its idempotency key (the executor's)
     * @param argumentDigest the digest of its arguments: what is approved
     * @param shown          the question: the tool, the key and the decoded arguments
     * @param requestedAt    when the call asked
     * @param expiresAt      when its token expires
     * @param approvedBy     who approved it already (the call has not been sent again since), or null
     */
    record Waiting(String principal, String tool, String operation, String key, String argumentDigest, String shown,
            Instant requestedAt, Instant expiresAt, @Nullable String approvedBy) {
    }

    /**
     * One answer.
     *
     * @param principal      who answered ({@code ""} on stdio)
     * @param tool           the tool's name
     * @param action         {@code accept}, {@code decline} or {@code cancel}
     * @param confirmed      whether it let the call run
     * @param answeredAt     when
     * @param argumentDigest the digest of the arguments confirmed
     * @param content        the form's content as sent
     * @param shown          the question asked (the tool, the key, the decoded arguments); null if not kept
     */
    record Answer(String principal, String tool, String action, boolean confirmed, Instant answeredAt,
            String argumentDigest, Map<String, Object> content, @Nullable String shown) {
    }
}
