package dev.idempotency.mcp;

/**
 * The names this module reads and writes on the wire, all under the prefix {@code dev.idempotency/} where they sit in
 * an MCP {@code _meta} map (MCP reserves un-prefixed names). See {@code docs/mcp.md} for each value.
 */
public final class McpMeta {

    /** The prefix of every {@code _meta} name this module uses. */
    public static final String PREFIX = "dev.idempotency/";

    // --- on a tool, in tools/list

    /** The operation's tier: {@code READ_ONLY}, {@code REVERSIBLE} or {@code IRREVERSIBLE}. */
    public static final String TIER = PREFIX + "tier";
    /** Where the key comes from, in the order the server tries them (a list of strings). */
    public static final String KEY_SOURCES = PREFIX + "keySources";
    /** How long a result is replayed, ISO-8601 ({@code PT24H}); absent for {@code READ_ONLY}. */
    public static final String TTL = PREFIX + "ttl";
    /** The retry policy a client should follow (a map, see {@code docs/mcp.md}). */
    public static final String RETRY = PREFIX + "retry";
    /** Whether the first execution waits for a confirmation (irreversible tools with {@link McpConfirmations}). */
    public static final String CONFIRMATION = PREFIX + "confirmation";

    // --- on a tools/call request

    /** The turn id a client runtime puts in the request's {@code _meta}: the key is derived from it. */
    public static final String TURN_ID = PREFIX + "turnId";
    /** An optional step id within the turn, for more than one call of one tool in one turn. */
    public static final String STEP_ID = PREFIX + "stepId";
    /** The confirmation token of an irreversible call, in the request's {@code _meta} (or as an argument). */
    public static final String CONFIRMATION_TOKEN = PREFIX + "confirmationToken";

    // --- on a tools/call result

    /** {@code true} when the result is the recorded one of an earlier call with the same key. */
    public static final String REPLAYED = PREFIX + "replayed";
    /** The key the call ran (or replayed) under. */
    public static final String KEY = PREFIX + "key";

    // --- in the transport context

    /**
     * The name under which a transport context extractor puts the authenticated principal (a string), for the
     * default principal function of {@link McpIdempotentTools.Builder#principal}.
     */
    public static final String PRINCIPAL = PREFIX + "principal";

    // --- arguments

    /** The argument a client runtime (not the model) fills with the key. */
    public static final String KEY_ARGUMENT = "idempotencyKey";
    /** The argument that may carry a confirmation token instead of {@code _meta}. */
    public static final String CONFIRMATION_ARGUMENT = "confirmationToken";
    /** The HTTP header a 2026-07-28 client mirrors {@link #KEY_ARGUMENT} into ({@code x-mcp-header}). */
    public static final String KEY_HEADER = "Idempotency-Key";

    private McpMeta() {
    }
}
