package dev.idempotency.mcp;

import io.modelcontextprotocol.server.McpSyncServerExchange;
import org.jspecify.annotations.Nullable;

/**
 * The MCP call running on this thread, for the {@link dev.idempotency.IdempotencyScope} and the
 * {@link dev.idempotency.ConfirmationGate} this module plugs into the executor: both are consulted by the executor on
 * the caller's thread, inside {@code execute}.
 */
record McpCall(String principal, String tool, String key, String argumentDigest, @Nullable String confirmationToken,
        @Nullable McpSyncServerExchange exchange) {

    private static final ThreadLocal<McpCall> CURRENT = new ThreadLocal<>();
    /** Set by the gate when the user declined through elicitation: the adapter must not offer a token then. */
    private static final ThreadLocal<Boolean> DECLINED = new ThreadLocal<>();

    static @Nullable McpCall current() {
        return CURRENT.get();
    }

    static void enter(McpCall call) {
        CURRENT.set(call);
        DECLINED.remove();
    }

    static void exit() {
        CURRENT.remove();
        DECLINED.remove();
    }

    static void markDeclined() {
        DECLINED.set(Boolean.TRUE);
    }

    static boolean declined() {
        return DECLINED.get() != null;
    }
}
