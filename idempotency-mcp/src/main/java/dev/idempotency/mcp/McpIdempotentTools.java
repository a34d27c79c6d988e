package dev.idempotency.mcp;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.server.HmacRequestStateCodec;
import io.modelcontextprotocol.modern.server.RequestStateCodec;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * MCP tools from idempotent operations: each {@link IdempotentTool} becomes one of the SDK's
 * {@link SyncToolSpecification}s, to register on any {@code McpServer.sync(...)} (stdio, servlet, streamable HTTP):
 *
 * <pre>{@code
 * McpConfirmations confirmations = McpConfirmations.builder(secret, store).build();
 * IdempotentExecutor executor = IdempotentExecutor.builder(store)
 *     .scope(McpIdempotentTools.principalScope())      // keys per principal
 *     .confirmationGate(confirmations)                  // irreversible tools ask first
 *     .build();
 * McpIdempotentTools tools = McpIdempotentTools.builder(executor)
 *     .confirmations(confirmations).tool(lookupOrder).tool(refund).build();
 * McpServer.sync(McpStdioGuard.transport(jsonMapper, System.in, System.out))
 *     .tools(tools.specifications()).build();
 * }</pre>
 *
 * <p><b>The tier is told to the client</b> as tool annotations ({@code READ_ONLY}: {@code readOnlyHint};
 * {@code REVERSIBLE}: not destructive, idempotent; {@code IRREVERSIBLE}: destructive, idempotent because of the key)
 * and in {@code _meta} under {@value McpMeta#PREFIX} (tier, key sources, time-to-live, retry policy).
 *
 * <p><b>The key comes from outside the model</b>, in this order: the {@code idempotencyKey} argument, filled by the
 * client runtime (declared with {@code "x-mcp-header": "Idempotency-Key"}); else {@code turn:<turnId>[/<stepId>]:<tool>}
 * from the request's {@code _meta} ({@link McpMeta#TURN_ID}, {@link McpMeta#STEP_ID}). The arguments are the
 * fingerprint, so a turn re-sent with other arguments is refused as key reuse. Never the JSON-RPC id: a retried request
 * gets a new one. A writing call with neither source runs nothing and gets {@code key_required}.
 *
 * <p><b>Keys belong to a principal</b>: the executor must be built with {@link #principalScope()} (or
 * {@link #principalScope(IdempotencyScope)}), which scopes each call to the principal of its transport context.
 *
 * <p>Every call goes through {@link IdempotentExecutor#execute}; every library exception becomes a result with
 * {@code isError = true} and structured content saying what to do (see {@code docs/mcp.md}).
 */
public final class McpIdempotentTools {

    /** The shortest request-state secret accepted, in bytes. */
    public static final int REQUEST_STATE_SECRET_BYTES = 32;

    private final IdempotentExecutor executor;
    private final JsonMapper mapper;
    private final Function<McpTransportContext, String> principal;
    private final @Nullable McpConfirmations confirmations;
    private final Transaction transaction;
    private final byte @Nullable [] requestStateSecret;
    private final List<SyncToolSpecification> specifications;
    private final ModernTools modern;

    private McpIdempotentTools(Builder b) {
        this.executor = b.executor;
        // unknown arguments are refused rather than dropped: the schema says additionalProperties: false
        this.mapper = b.mapper.rebuild().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES).build();
        this.principal = b.principal;
        this.confirmations = b.confirmations;
        this.transaction = b.transaction;
        this.requestStateSecret = b.requestStateSecret;
        List<SyncToolSpecification> specs = new ArrayList<>();
        for (ToolBinding tool : b.bindings) {
            specs.add(specification(tool));
        }
        this.specifications = List.copyOf(specs);
        this.modern = new ModernTools(this, b.bindings, confirmations == null ? null : "input_required");
    }

    /** Starts the tools of a server whose calls run through {@code executor}. */
    public static Builder builder(IdempotentExecutor executor) {
        return new Builder(executor);
    }

    /** The tool specifications, to register with {@code McpServer.sync(...).tools(...)}. */
    public List<SyncToolSpecification> specifications() {
        return specifications;
    }

    /**
     * The same tools for 2026-07-28 clients, as the SDK's {@code tools} feature: register it on a
     * {@code io.modelcontextprotocol.modern.server.McpServer} built with {@link #requestStateCodec}, or take
     * {@link #modernServer}, which does both.
     */
    public ToolsFeature modernFeature() {
        return ToolsFeature.ofSync(modern);
    }

    /**
     * The codec that seals an {@code input_required} result's request state: HMAC-SHA256 under the
     * {@linkplain Builder#requestStateSecret request-state secret} (unless set, a key derived from the
     * {@link McpConfirmations}' secret; without either, nothing ever asks, a key of this process), bound to the
     * principal, the method and the tool, valid for the confirmations' ttl. A state sealed on one node opens on every
     * node with the same secret; a node with another secret refuses it (JSON-RPC error -32602, {@code Invalid or
     * expired requestState}) and runs nothing.
     */
    public RequestStateCodec requestStateCodec() {
        byte[] key = requestStateSecret != null ? requestStateSecret.clone()
                : confirmations != null ? confirmations.derivedKey("dev.idempotency/mcp-request-state")
                : ConfirmationTokens.randomKey();
        return HmacRequestStateCodec.builder().key(key).principalExtractor(principal)
                .ttl(confirmations != null ? confirmations.ttl() : Duration.ofMinutes(10)).build();
    }

    /**
     * A 2026-07-28 server of these tools (stateless: {@code server/discover}, {@code tools/list},
     * {@code tools/call}, confirmation by {@code input_required}), to hand to the SDK's
     * {@code HttpServletMcpTransport} or {@code StdioMcpTransport}.
     *
     * @param name    the server's name, as {@code server/discover} shows it
     * @param version the server's version
     * @param json    the SDK's JSON mapper
     */
    public io.modelcontextprotocol.modern.server.McpServer modernServer(String name, String version,
            McpJsonMapper json) {
        return io.modelcontextprotocol.modern.server.McpServer.builder()
                .serverInfo(io.modelcontextprotocol.modern.McpSchema.Implementation.builder(name, version).build())
                .jsonMapper(json).feature(modernFeature()).requestStateCodec(requestStateCodec()).build();
    }

    /** The tools as {@code tools/list} shows them. */
    public List<McpSchema.Tool> tools() {
        return specifications.stream().map(SyncToolSpecification::tool).toList();
    }

    /**
     * The scope to build the executor with: inside an MCP tool call, the call's principal; outside, none. Without
     * it, every principal shares one key space and one user could replay another's result.
     */
    public static IdempotencyScope principalScope() {
        return principalScope(IdempotencyScope.NONE);
    }

    /** As {@link #principalScope()}, with {@code outside} for the calls that do not come through MCP. */
    public static IdempotencyScope principalScope(IdempotencyScope outside) {
        Objects.requireNonNull(outside, "outside");
        return () -> {
            McpCall call = McpCall.current();
            if (call == null) {
                return outside.current();
            }
            McpCall.markScoped();
            // prefixed, so that an MCP principal can never equal a scope value of the application's own scope
            return "mcp:" + call.principal();
        };
    }

    private SyncToolSpecification specification(ToolBinding tool) {
        String confirmation = confirmations == null ? null : confirmations.legacyMode();
        return SyncToolSpecification.builder().tool(tool(tool, confirmation, true))
                .callHandler((exchange, request) -> call(tool, exchange, request)).build();
    }

    /**
     * The tool as {@code tools/list} shows it; {@code confirmation} is the gate's mode, or null without one;
     * {@code legacy}: as 2025-11-25 shows it (a token argument), else as 2026-07-28 (a key header, input_required).
     */
    static McpSchema.Tool tool(ToolBinding tool, @Nullable String confirmation, boolean legacy) {
        String confirm = tool.tier() == Tier.IRREVERSIBLE ? confirmation : null;
        McpSchema.Tool.Builder t = McpSchema.Tool
                .builder(tool.name(), InputSchemas.of(tool.fields(), tool.where(), tool.tier(),
                        legacy && confirm != null && confirm.contains("token")))
                .description(tool.description())
                .annotations(annotations(tool.tier(), tool.title(), tool.openWorld()))
                .meta(meta(tool, confirm, legacy));
        if (tool.title() != null) {
            t.title(tool.title());
        }
        return t.build();
    }

    static McpSchema.ToolAnnotations annotations(Tier tier, @Nullable String title, boolean openWorld) {
        return switch (tier) {
            case READ_ONLY -> new McpSchema.ToolAnnotations(title, true, null, null, openWorld, null);
            case REVERSIBLE -> new McpSchema.ToolAnnotations(title, false, false, true, openWorld, null);
            // idempotent only because the key makes it so: a call without a key is refused
            case IRREVERSIBLE -> new McpSchema.ToolAnnotations(title, false, true, true, openWorld, null);
        };
    }

    private static Map<String, Object> meta(ToolBinding tool, @Nullable String confirm, boolean legacy) {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put(McpMeta.TIER, tool.tier().name());
        Map<String, Object> retry = new LinkedHashMap<>();
        if (tool.tier() == Tier.READ_ONLY) {
            meta.put(McpMeta.KEY_SOURCES, List.of());
            retry.put("afterTimeout", "retry");
        } else {
            meta.put(McpMeta.KEY_SOURCES, legacy ? List.of("argument:" + McpMeta.KEY_ARGUMENT,
                    "_meta:" + McpMeta.TURN_ID + "(+" + McpMeta.STEP_ID + ")+tool")
                    : List.of("argument:" + McpMeta.KEY_ARGUMENT + "(=header:Mcp-Param-" + McpMeta.KEY_HEADER + ")",
                    "_meta:" + McpMeta.TURN_ID + "(+" + McpMeta.STEP_ID + ")+tool"));
            meta.put(McpMeta.TTL, tool.ttl().toString());
            retry.put("afterTimeout", "same_call_same_key");
            retry.put("newKeyForRetry", false);
            retry.put("onInProgress", "same_call_later");
            retry.put("onKeyReused", "stop_ask_user");
            retry.put("onOutcomeUnknown", "stop_human_review");
            if (confirm != null) {
                meta.put(McpMeta.CONFIRMATION, confirm);
                retry.put("onConfirmationRequired", !legacy ? "input_required: the user answers, the client"
                        + " re-sends the request" : confirm.contains("token")
                        ? "ask_user_then_approver_then_same_call_with_token"
                        : "stop_ask_user");
            }
        }
        meta.put(McpMeta.RETRY, retry);
        return meta;
    }

    private CallToolResult call(ToolBinding tool, McpSyncServerExchange exchange, CallToolRequest request) {
        McpTransportContext context = exchange.transportContext() == null ? McpTransportContext.EMPTY
                : exchange.transportContext();
        return run(tool, request.arguments(), request.meta(), context, exchange, null).result();
    }

    /**
     * What one call came to: a result, or (a 2026-07-28 call of an irreversible tool waiting for its user) the token
     * to send back as request state with the question {@code shown}.
     */
    record Outcome(@Nullable CallToolResult result, ConfirmationTokens.@Nullable Minted ask, String shown) {
    }

    /**
     * One call through the executor, for both eras.
     *
     * @param exchange the 2025-11-25 exchange (elicitation), null on the 2026-07-28 path
     * @param modern   the 2026-07-28 call's answer, opened state and capabilities, null on the 2025-11-25 path
     */
    Outcome run(ToolBinding tool, @Nullable Map<String, Object> argumentsIn, @Nullable Map<String, Object> metaIn,
            McpTransportContext context, @Nullable McpSyncServerExchange exchange, @Nullable Modern modern) {
        Map<String, Object> arguments = argumentsIn == null ? new LinkedHashMap<>() : new LinkedHashMap<>(argumentsIn);
        Object keyArgument = arguments.remove(McpMeta.KEY_ARGUMENT);
        Object tokenArgument = arguments.remove(McpMeta.CONFIRMATION_ARGUMENT);
        Map<String, Object> meta = metaIn == null ? Map.of() : metaIn;
        Object decoded;
        try {
            decoded = tool.decode(mapper, arguments);
        } catch (JacksonException | IllegalArgumentException e) {
            return new Outcome(ToolResults.invalidArguments(tool.name(), String.valueOf(
                    e instanceof JacksonException j ? j.getOriginalMessage() : e.getMessage())), null, "");
        }
        String key;
        if (tool.tier() == Tier.READ_ONLY) {
            key = tool.name();  // the executor neither claims nor records a read-only call
        } else {
            if (keyArgument != null && !(keyArgument instanceof String)) {
                return new Outcome(ToolResults.invalidArguments(tool.name(), McpMeta.KEY_ARGUMENT
                        + " must be a string"), null, "");
            }
            key = KeySources.resolve(tool.name(), (String) keyArgument, meta);
            if (key == null) {
                return new Outcome(ToolResults.keyRequired(tool.name()), null, "");
            }
        }
        // 2026-07-28: the token comes only as the request state the client echoed, never from the model's arguments
        String token = modern != null ? modern.state()
                : tokenArgument instanceof String s ? s
                : meta.get(McpMeta.CONFIRMATION_TOKEN) instanceof String s ? s : null;
        String who = principal.apply(context);
        String digest = Canonical.digest(mapper, decoded);
        String shown = "Confirm " + tool.name() + " with idempotency key '" + key + "': "
                + mapper.writeValueAsString(decoded) + ". This cannot be undone.";
        McpCall.Answered answered = modern == null ? null : new McpCall.Answered(modern.action(), modern.content());
        McpCall.enter(new McpCall(who, tool.name(), key, digest, token, exchange,
                tool.tier() == Tier.READ_ONLY ? Duration.ZERO : tool.ttl(), answered, shown));
        if (tool.tier() == Tier.READ_ONLY) {
            McpCall.markScoped();  // no key space: nothing is claimed, recorded or replayed
        }
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            Object result = transaction.run(() -> tool.invoke(decoded, key));
            if (!McpCall.scoped()) {
                // a replay from a key space shared by every principal may be another user's result: never return it
                return new Outcome(ToolResults.unscoped(tool.operation(), key), null, shown);
            }
            return new Outcome(ToolResults.success(mapper, result, tool.tier() == Tier.READ_ONLY ? null : key,
                    scope.replayed()), null, shown);
        } catch (IdempotencyException e) {
            if (!McpCall.scoped()) {
                return new Outcome(ToolResults.unscoped(tool.operation(), key), null, shown);
            }
            return switch (e.kind()) {
                case CONFIRMATION_REQUIRED -> confirmationRequired(e, tool, who, digest, modern, shown);
                default -> new Outcome(ToolResults.of(e, tool.lockTimeout()), null, shown);
            };
        } catch (Exception e) {
            return new Outcome(McpCall.scoped() ? ToolResults.toolFailed(e, tool.tier())
                    : ToolResults.unscoped(tool.operation(), key), null, shown);
        } finally {
            McpCall.exit();
        }
    }

    /**
     * The call needs the user's confirmation: declined already, asked through a token (2025-11-25) or the request
     * state of {@code input_required} (2026-07-28), or refused when this client cannot be asked.
     */
    private Outcome confirmationRequired(IdempotencyException e, ToolBinding tool, String who, String digest,
            @Nullable Modern modern, String shown) {
        if (McpCall.declined()) {
            return new Outcome(ToolResults.declined(e), null, shown);
        }
        String token = McpCall.current().confirmationToken();
        if (McpCall.awaitingApproval() != null && token != null) {
            // the token is good, and no approver said yes yet: the same token, once they have
            return new Outcome(ToolResults.approvalPending(e, token, McpCall.awaitingApproval()), null, shown);
        }
        if (confirmations == null || e.key() == null || (modern != null ? !modern.canAsk()
                : !confirmations.usesTokens())) {
            return new Outcome(ToolResults.confirmationRequired(e, null, null), null, shown);
        }
        String operation = e.operation() != null ? e.operation() : tool.operation();
        ConfirmationTokens.Minted minted = confirmations.mint(who, operation, e.key(), digest);
        if (modern != null) {
            return new Outcome(null, minted, shown);
        }
        confirmations.pend(McpCall.current(), operation, e.key(), minted);
        return new Outcome(ToolResults.confirmationRequired(e, minted.token(), minted.expiresAt()), null, shown);
    }

    /**
     * What a 2026-07-28 request adds to a call.
     *
     * @param action    the user's answer to the confirmation asked before, null when the request carries none
     * @param content   that answer's form content
     * @param state     the opened request state (the confirmation token), null when the request carries none
     * @param canAsk    whether the client declared elicitation, so that {@code input_required} may ask it
     */
    record Modern(@Nullable String action, Map<String, Object> content,
            @Nullable String state, boolean canAsk) {
    }

    /**
     * Runs one tool call inside a transaction of the application's: the executor (through its
     * {@code TransactionBridge}) joins it, so that the claim and the result commit with the tool's own writes, and a
     * {@code REVERSIBLE} tool's compensation runs when it rolls back after the tool returned.
     */
    @FunctionalInterface
    public interface Transaction {
        /**
         * Runs {@code call} in a transaction: commits it when {@code call} returns, rolls it back when it throws (and
         * throws on), and returns its result.
         */
        @Nullable Object run(Callable<?> call) throws Exception;
    }

    /** Builds {@link McpIdempotentTools}. */
    public static final class Builder {
        private final IdempotentExecutor executor;
        private final List<ToolBinding> bindings = new ArrayList<>();
        private JsonMapper mapper = JsonMapper.builder().build();
        private Function<McpTransportContext, String> principal = Builder::defaultPrincipal;
        private @Nullable McpConfirmations confirmations;
        private Transaction transaction = Callable::call;
        private byte @Nullable [] requestStateSecret;

        private Builder(IdempotentExecutor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
        }

        private static String defaultPrincipal(McpTransportContext context) {
            Object p = context.get(McpMeta.PRINCIPAL);
            return p == null ? "" : p.toString();
        }

        /** Adds a tool. */
        public Builder tool(IdempotentTool<?, ?> tool) {
            bindings.add(ToolBinding.of(Objects.requireNonNull(tool, "tool"), executor));
            return this;
        }

        /**
         * Adds every public {@code @Idempotent} method of a Spring bean as a tool, named after its operation. Pass the
         * bean from the application context: the call goes through its proxy, so the aspect claims the key, joins the
         * transaction and asks the context's {@code ConfirmationGate}, and the context's {@code IdempotencyScope}
         * must be {@link #principalScope()}. A writing method takes the key as a {@code String idempotencyKey}
         * parameter, filled by this adapter from the call, and its key expression must use it
         * ({@code key = "'REFUND:' + #idempotencyKey"}); its other parameters are the tool's arguments (compile with
         * {@code -parameters}).
         *
         * @throws IllegalArgumentException if a method does not fit, naming it and the fix
         */
        public Builder bean(Object bean) {
            bindings.addAll(BeanMethodBinding.of(Objects.requireNonNull(bean, "bean")));
            return this;
        }

        /** The Jackson 3 mapper that decodes arguments and encodes results (the executor's, ideally). */
        public Builder jsonMapper(JsonMapper mapper) {
            this.mapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        /**
         * Who calls, from the transport context: by default the value a context extractor put under
         * {@link McpMeta#PRINCIPAL} (none, that is one shared key space, on stdio, where the process is the user's).
         * Return {@code ""} for none, never null.
         */
        public Builder principal(Function<McpTransportContext, String> principal) {
            this.principal = Objects.requireNonNull(principal, "principal");
            return this;
        }

        /**
         * The confirmation gate the executor was built with: 2026-07-28 calls of irreversible tools are then asked by
         * {@code input_required}, and 2025-11-25 refusals carry a confirmation token when the gate gives them.
         */
        public Builder confirmations(McpConfirmations confirmations) {
            this.confirmations = Objects.requireNonNull(confirmations, "confirmations");
            return this;
        }

        /**
         * Runs every tool call in a transaction (none unless set): with Spring,
         * {@code call -> transactionTemplate.execute(status -> call.call())} (rethrowing checked exceptions), on the
         * store's {@code DataSource}, and the executor built with the Spring {@code TransactionBridge}. The call's
         * claim and result then commit or roll back with the tool's writes, and a rollback after the tool returned
         * runs its compensation ({@link IdempotentTool.Builder#compensation}, {@code @Idempotent(compensate = ...)}).
         */
        public Builder transaction(Transaction transaction) {
            this.transaction = Objects.requireNonNull(transaction, "transaction");
            return this;
        }

        /**
         * The HMAC key of the 2026-07-28 request state ({@link #requestStateCodec()}): at least 32 bytes, <b>the same
         * on every node</b> that serves the tools, so that a client's re-sent request opens on whichever node it
         * lands. A node with another secret answers such a request with a JSON-RPC error and runs nothing; the
         * client then asks again. Unless set, a key derived from the {@link McpConfirmations}' secret.
         *
         * @throws IllegalArgumentException if it is shorter than 32 bytes
         */
        public Builder requestStateSecret(byte[] secret) {
            Objects.requireNonNull(secret, "secret");
            if (secret.length < REQUEST_STATE_SECRET_BYTES) {
                throw new IllegalArgumentException("the request-state secret must be at least "
                        + REQUEST_STATE_SECRET_BYTES + " bytes (HMAC-SHA256), but has " + secret.length
                        + "; give every node the same one");
            }
            this.requestStateSecret = secret.clone();
            return this;
        }

        /**
         * @throws IllegalArgumentException when two tools have one name
         * @throws dev.idempotency.IdempotencyReplayException when a tool's result type cannot be replayed
         */
        public McpIdempotentTools build() {
            Set<String> names = new HashSet<>();
            for (ToolBinding tool : bindings) {
                if (!names.add(tool.name())) {
                    throw new IllegalArgumentException("two tools are named '" + tool.name() + "'; give one of them"
                            + " another name (IdempotentTool.Builder.name, or the operation of @Idempotent)");
                }
            }
            return new McpIdempotentTools(this);
        }
    }
}
