package dev.idempotency.mcp;

import dev.idempotency.IdempotencyException;
import dev.idempotency.Tier;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * Tool results: a success as structured content with its JSON as text, and every refusal as {@code isError = true}
 * with structured content that says what the agent must do ({@code error}, {@code retry}, {@code action}). Library
 * messages name the operation and key only, never a payload; a failure of the tool's own work shows its message to the
 * caller who made that call.
 */
final class ToolResults {

    /** The {@code error} codes of {@code docs/mcp.md}. */
    static final String IN_PROGRESS = "in_progress";
    static final String KEY_REUSED = "key_reused";
    static final String OUTCOME_UNKNOWN = "outcome_unknown";
    static final String CONFIRMATION_REQUIRED = "confirmation_required";
    static final String CONFIRMATION_DECLINED = "confirmation_declined";
    static final String APPROVAL_PENDING = "approval_pending";
    static final String KEY_REQUIRED = "key_required";
    static final String INVALID_KEY = "invalid_key";
    static final String INVALID_ARGUMENTS = "invalid_arguments";
    static final String STORE_UNAVAILABLE = "store_unavailable";
    static final String REFUSED = "refused";
    static final String TOOL_FAILED = "tool_failed";
    static final String MISCONFIGURED = "server_misconfigured";

    private ToolResults() {
    }

    static CallToolResult success(JsonMapper mapper, @Nullable Object result, @Nullable String key, boolean replayed) {
        Object tree = mapper.convertValue(result, Object.class);
        Map<String, Object> structured;
        if (tree instanceof Map<?, ?> map) {
            structured = new LinkedHashMap<>();
            map.forEach((k, v) -> structured.put(String.valueOf(k), v));
        } else {
            // structured content must be a JSON object: a scalar, list or null result is wrapped
            structured = new LinkedHashMap<>();
            structured.put("result", tree);
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put(McpMeta.REPLAYED, replayed);
        if (key != null) {
            meta.put(McpMeta.KEY, key);
        }
        return CallToolResult.builder()
                .addTextContent(mapper.writeValueAsString(tree))
                .structuredContent(structured)
                .meta(meta)
                .isError(false)
                .build();
    }

    /**
     * The result of a call the library refused, by its {@link IdempotencyException#kind() kind}. A confirmation the
     * call needs is answered by {@link #confirmationRequired} (the caller mints its token), so here it is a refusal.
     */
    static CallToolResult of(IdempotencyException e, Duration lockTimeout) {
        return switch (e.kind()) {
            case IN_PROGRESS -> {
                Map<String, Object> s = error(IN_PROGRESS, "same_call_later", "wait, then send the same call again"
                        + " with the same key: it returns the outcome of the attempt still running", e);
                s.put("retryAfterMs", Math.max(1000, lockTimeout.toMillis()));
                yield result(s);
            }
            case KEY_REUSED -> result(error(KEY_REUSED, "never", "do not retry: this key already did something with"
                    + " other arguments; ask the user whether this is a new request", e));
            case OUTCOME_UNKNOWN -> result(error(OUTCOME_UNKNOWN, "never", "stop: it is unknown whether the effect"
                    + " happened, and a human must look before anything is retried; tell the user", e));
            case INVALID_KEY -> result(error(INVALID_KEY, "never", "fix the idempotency key (1 to 1024 characters,"
                    + " no control characters)", e));
            case STORE_UNAVAILABLE -> result(error(STORE_UNAVAILABLE, "same_call_later", "send the same call again"
                    + " later with the same key", e));
            case CONFIRMATION_REQUIRED, REPLAY_FAILED, REFUSED ->
                    result(error(REFUSED, "never", "do not retry; tell the user", e));
        };
    }

    static CallToolResult confirmationRequired(IdempotencyException e, @Nullable String token,
            @Nullable Instant expiresAt) {
        Map<String, Object> s = error(CONFIRMATION_REQUIRED, token != null ? "after_approval" : "never",
                token != null ? "nothing ran: a person other than the caller must approve this call in the"
                        + " application; tell the user, and once it is approved send the same call again, unchanged,"
                        + " with the confirmationToken argument set to this result's confirmationToken"
                        : "stop: the user must confirm this call through the client (elicitation), which this"
                        + " client cannot ask; tell the user", e);
        if (token != null) {
            s.put("confirmationToken", token);
            s.put("expiresAt", String.valueOf(expiresAt));
        }
        return result(s);
    }

    /** A valid token sent before an approver approved the call: the same token, for the same call, later. */
    static CallToolResult approvalPending(IdempotencyException e, String token, Instant expiresAt) {
        Map<String, Object> s = error(APPROVAL_PENDING, "after_approval", "nothing ran: the call still waits for a"
                + " person other than the caller to approve it in the application; do not send it again until the"
                + " user says it was approved, then send it unchanged with the same confirmationToken", e);
        s.put("confirmationToken", token);
        s.put("expiresAt", String.valueOf(expiresAt));
        return result(s);
    }

    static CallToolResult declined(IdempotencyException e) {
        return result(error(CONFIRMATION_DECLINED, "never", "the user declined: do not retry", e));
    }

    static CallToolResult unscoped(String operation, String key) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("error", MISCONFIGURED);
        s.put("retry", "never");
        s.put("action", "tell the user: the server is misconfigured");
        s.put("operation", operation);
        s.put("key", key);
        s.put("message", McpCall.UNSCOPED);
        return result(s);
    }

    static CallToolResult keyRequired(String tool) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("error", KEY_REQUIRED);
        s.put("retry", "fix_call");
        s.put("action", "the client runtime must send an idempotencyKey argument (the same for every retry of one"
                + " intent) or a turn id in _meta." + McpMeta.TURN_ID);
        s.put("message", "tool '" + tool + "' writes, and its call carried neither an idempotencyKey argument nor a"
                + " turn id in _meta (" + McpMeta.TURN_ID + "); nothing ran");
        return result(s);
    }

    static CallToolResult invalidArguments(String tool, String problem) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("error", INVALID_ARGUMENTS);
        s.put("retry", "fix_call");
        s.put("action", "correct the arguments to match the tool's input schema");
        s.put("message", "the arguments of tool '" + tool + "' do not match its input schema: " + problem
                + "; nothing ran");
        return result(s);
    }

    static CallToolResult toolFailed(Exception e, Tier tier) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("error", TOOL_FAILED);
        s.put("retry", tier == Tier.IRREVERSIBLE ? "never" : "same_call");
        s.put("action", tier == Tier.IRREVERSIBLE ? "do not retry; tell the user what failed"
                : "the same call with the same key may be sent again");
        s.put("exception", e.getClass().getSimpleName());
        s.put("message", String.valueOf(e.getMessage()));
        return result(s);
    }

    private static Map<String, Object> error(String code, String retry, String action, IdempotencyException e) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("error", code);
        s.put("retry", retry);
        s.put("action", action);
        if (e.operation() != null) {
            s.put("operation", e.operation());
        }
        if (e.key() != null) {
            s.put("key", e.key());
        }
        s.put("message", String.valueOf(e.getMessage()));
        return s;
    }

    private static CallToolResult result(Map<String, Object> structured) {
        return CallToolResult.builder()
                .addTextContent(structured.get("error") + ": " + structured.get("message") + " -> "
                        + structured.getOrDefault("action", ""))
                .structuredContent(structured)
                .isError(true)
                .build();
    }
}
