package dev.idempotency.mcp;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where a writing tool call's key comes from: the client runtime's {@code idempotencyKey} argument, else the turn
 * (and step) id in the request's {@code _meta} plus the tool name. Never the JSON-RPC request id: a request re-issued
 * after a broken stream carries a new one.
 */
final class KeySources {

    private KeySources() {
    }

    /** The key, or null when the call carries neither source. */
    static @Nullable String resolve(String tool, @Nullable String keyArgument, Map<String, Object> meta) {
        if (keyArgument != null) {
            return keyArgument;  // blank or too long: the executor refuses it with IdempotencyKeyException
        }
        Object turn = meta.get(McpMeta.TURN_ID);
        if (turn == null || turn.toString().isBlank()) {
            return null;
        }
        Object step = meta.get(McpMeta.STEP_ID);
        return "turn:" + turn + (step == null ? "" : "/" + step) + ":" + tool;
    }
}
