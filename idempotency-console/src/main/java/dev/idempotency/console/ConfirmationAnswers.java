package dev.idempotency.console;

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
