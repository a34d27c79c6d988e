package dev.idempotency.mcp;

import io.modelcontextprotocol.server.McpSyncServerExchange;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The MCP call running on this thread, for the {@link dev.idempotency.IdempotencyScope} and the
 * {@link dev.idempotency.ConfirmationGate} this module plugs into the executor: both are consulted by the executor on
 * the caller's thread, inside {@code execute}.
 */
record McpCall(String principal, String tool, String key, String argumentDigest, @Nullable String confirmationToken,
        @Nullable McpSyncServerExchange exchange, Duration ttl, @Nullable Answered answered, String shown) {

    /**
     * A 2026-07-28 call: its confirmation comes back as the client's answer to an {@code input_required} result
     * ({@code inputResponses}) and the token as the opened request state, never as an argument.
     *
     * @param action  the client's answer ({@code accept}, {@code decline}, {@code cancel}), null when the request
     *                carries none
     * @param content the answer's form content
     */
    record Answered(@Nullable String action, java.util.Map<String, Object> content) {
    }

    private static final ThreadLocal<McpCall> CURRENT = new ThreadLocal<>();
    /** Set by the gate when the user declined through elicitation: the adapter must not offer a token then. */
    private static final ThreadLocal<Boolean> DECLINED = new ThreadLocal<>();
    /** Set by the gate when a valid token came without an approver's approval: the token's expiry. */
    private static final ThreadLocal<java.time.Instant> AWAITING = new ThreadLocal<>();
    /** Set by {@link McpIdempotentTools#principalScope()} when the executor asks it for this call's scope. */
    private static final ThreadLocal<Boolean> SCOPED = new ThreadLocal<>();

    static @Nullable McpCall current() {
        return CURRENT.get();
    }

    static void enter(McpCall call) {
        CURRENT.set(call);
        DECLINED.remove();
        AWAITING.remove();
        SCOPED.remove();
    }

    static void exit() {
        CURRENT.remove();
        DECLINED.remove();
        AWAITING.remove();
        SCOPED.remove();
    }

    static void markScoped() {
        SCOPED.set(Boolean.TRUE);
    }

    /**
     * Whether the call's key was scoped to its principal: true when the executor asked the principal scope, or when
     * there is no principal to scope to (stdio).
     */
    /**
     * Refuses to run an effect whose key is not scoped to its principal: the executor was built without
     * {@link McpIdempotentTools#principalScope()}.
     */
    static void requireScoped(String operation) {
        if (!scoped()) {
            throw new IllegalStateException(UNSCOPED + " (operation " + operation + ")");
        }
    }

    static final String UNSCOPED = "the IdempotentExecutor behind this MCP tool was not built with"
            + " .scope(McpIdempotentTools.principalScope()), so every principal would share one key space; nothing"
            + " ran. Build the executor (or declare the Spring IdempotencyScope bean) with McpIdempotentTools"
            + ".principalScope()";

    static boolean scoped() {
        McpCall call = CURRENT.get();
        return SCOPED.get() != null || call == null || call.principal().isEmpty();
    }

    static void markDeclined() {
        DECLINED.set(Boolean.TRUE);
    }

    static boolean declined() {
        return DECLINED.get() != null;
    }

    static void markAwaitingApproval(java.time.@Nullable Instant tokenExpiresAt) {
        if (tokenExpiresAt != null) {
            AWAITING.set(tokenExpiresAt);
        }
    }

    /** The expiry of the valid token that came without an approval, or null. */
    static java.time.@Nullable Instant awaitingApproval() {
        return AWAITING.get();
    }
}
