package dev.idempotency.console;

import dev.idempotency.ResolvedBy;
import dev.idempotency.mcp.McpConfirmations;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The answers {@code idempotency-mcp}'s {@link McpConfirmations} recorded for a key, read without knowing whose call
 * it was ({@link McpConfirmations#answers(String, String)}), and the calls waiting for an approver
 * ({@link McpConfirmations#pending(int)}, {@link McpConfirmations#approve}). Loaded only when
 * {@code idempotency-mcp} is on the class path (an optional dependency of the console); without an
 * {@link McpConfirmations} bean it finds none.
 */
final class McpConfirmationAnswers implements ConfirmationAnswers {

    /** What {@code McpIdempotentTools.principalScope()} puts before an MCP principal to scope its keys. */
    private static final String SCOPE_PREFIX = "mcp:";

    private final Supplier<@Nullable McpConfirmations> confirmations;

    McpConfirmationAnswers(Supplier<@Nullable McpConfirmations> confirmations) {
        this.confirmations = confirmations;
    }

    @Override
    public boolean available() {
        return confirmations.get() != null;
    }

    @Override
    public List<Answer> answers(String operation, String key) {
        McpConfirmations gate = confirmations.get();
        if (gate == null) {
            return List.of();
        }
        return gate.answers(operation, key).stream().map(a -> new Answer(a.principal(), a.tool(), a.action(),
                a.confirmed(), a.answeredAt(), a.argumentDigest(), a.content(), a.shown())).toList();
    }

    @Override
    public boolean approvals() {
        McpConfirmations gate = confirmations.get();
        return gate != null && gate.usesTokens();
    }

    @Override
    public List<Waiting> waiting(int limit) {
        McpConfirmations gate = confirmations.get();
        if (gate == null) {
            return List.of();
        }
        return gate.pending(limit).stream().map(p -> new Waiting(p.principal(), p.tool(), p.operation(), p.key(),
                p.argumentDigest(), p.shown(), p.requestedAt(), p.expiresAt(), gate.approval(p)
                        .map(a -> String.valueOf(a.content().get("approvedBy"))).orElse(null))).toList();
    }

    @Override
    public void approve(String principal, String operation, String key, String argumentDigest, ResolvedBy by) {
        McpConfirmations gate = confirmations.get();
        if (gate == null) {
            throw new IllegalStateException("the application has no McpConfirmations: no call waits for an approver");
        }
        gate.approve(principal, operation, key, argumentDigest, by);
    }

    @Override
    public String scopeOf(String principal) {
        return SCOPE_PREFIX + principal;
    }
}
