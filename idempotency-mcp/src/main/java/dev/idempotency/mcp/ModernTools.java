package dev.idempotency.mcp;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * The same tools on the 2026-07-28 revision (the SDK's {@code io.modelcontextprotocol.modern} API): stateless, each
 * request carrying its version and capabilities; an irreversible call waiting for its user answers
 * {@code input_required} with an elicitation and the confirmation token as request state.
 */
final class ModernTools implements McpSyncToolRepository {

    /** The name of the one input request an irreversible call asks: the user's yes or no. */
    static final String CONFIRM = "confirm";

    /** The threads tool calls run on: daemon threads, made as needed, kept a minute when idle. */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "idempotency-mcp-call");
        thread.setDaemon(true);
        return thread;
    });

    private final Map<String, McpSyncTool> tools = new LinkedHashMap<>();
    private final List<McpSchema.Tool> definitions;

    ModernTools(McpIdempotentTools adapter, List<ToolBinding> bindings, @Nullable String confirmation) {
        for (ToolBinding tool : bindings) {
            McpSchema.Tool definition = definition(tool, confirmation != null);
            tools.put(tool.name(), McpSyncTool.of(definition,
                    (ctx, request) -> McpSyncResponse.result(call(adapter, tool, ctx, request))));
        }
        this.definitions = tools.values().stream().map(McpSyncTool::definition).toList();
    }

    @Override
    public ToolsPage list(McpRequestContext context, @Nullable String cursor) {
        return ToolsPage.of(definitions);
    }

    @Override
    public @Nullable McpSyncTool find(McpRequestContext context, String name) {
        return tools.get(name);
    }

    /** The tool as 2026-07-28's {@code tools/list} shows it: no token argument, confirmation by input_required. */
    static McpSchema.Tool definition(ToolBinding tool, boolean confirms) {
        io.modelcontextprotocol.spec.McpSchema.Tool legacy = McpIdempotentTools.tool(tool,
                confirms ? "input_required" : null, false);
        io.modelcontextprotocol.spec.McpSchema.ToolAnnotations a = legacy.annotations();
        McpSchema.Tool.Builder t = McpSchema.Tool.builder(tool.name(),
                        InputSchemas.of(tool.fields(), tool.where(), tool.tier(), false))
                .description(tool.description())
                .annotations(new McpSchema.ToolAnnotations(a.title(), a.readOnlyHint(), a.destructiveHint(),
                        a.idempotentHint(), a.openWorldHint()))
                .meta(legacy.meta());
        if (tool.title() != null) {
            t.title(tool.title());
        }
        return t.build();
    }

    private static McpSchema.CallToolOutcome call(McpIdempotentTools adapter, ToolBinding tool,
            McpRequestContext ctx, McpSchema.CallToolRequest request) {
        McpTransportContext context = ctx.transportContext() == null ? McpTransportContext.EMPTY
                : ctx.transportContext();
        String action = null;
        Map<String, Object> content = Map.of();
        if (request.inputResponses() != null && request.inputResponses().get(CONFIRM) instanceof Map<?, ?> answer) {
            action = answer.get("action") instanceof String s ? s : null;
            if (answer.get("content") instanceof Map<?, ?> c) {
                Map<String, Object> copy = new LinkedHashMap<>();
                c.forEach((k, v) -> copy.put(String.valueOf(k), v));
                content = copy;
            }
        }
        boolean canAsk = ctx.clientCapabilities() != null && ctx.clientCapabilities().supportsElicitationForm();
        McpIdempotentTools.Modern modern = new McpIdempotentTools.Modern(action, content, request.requestState(),
                canAsk);
        Map<String, Object> meta = ctx.meta();
        // A client that gives up cancels its request, and the SDK interrupts the thread that handles it. The call
        // runs on a thread of its own, which no cancellation interrupts, and is awaited uninterruptibly: an effect
        // under way finishes and is recorded, so that the client's retry replays it (an interrupted refund would be
        // an outcome nobody knows).
        McpIdempotentTools.Outcome outcome = CompletableFuture.supplyAsync(
                () -> adapter.run(tool, request.arguments(), meta, context, null, modern), CALLS).join();
        if (outcome.ask() != null) {
            // the token travels as request state, which the SDK seals again and the client echoes without the
            // model; the question names the tool, the key and the arguments, and is the user's to answer
            return McpSchema.InputRequiredResult.builder()
                    .elicit(CONFIRM, McpSchema.ElicitFormRequest
                            .builder(outcome.shown(), McpConfirmations.confirmSchema(tool.name())).build())
                    .requestState(outcome.ask().token())
                    .build();
        }
        return complete(outcome.result());
    }

    /** A 2025-11-25 result as 2026-07-28's. */
    static McpSchema.CallToolResult complete(io.modelcontextprotocol.spec.McpSchema.CallToolResult legacy) {
        McpSchema.CallToolResult.Builder b = McpSchema.CallToolResult.builder()
                .isError(Boolean.TRUE.equals(legacy.isError()));
        if (legacy.structuredContent() != null) {
            b.structuredContent(legacy.structuredContent());
        }
        if (legacy.meta() != null) {
            b.meta(legacy.meta());
        }
        for (io.modelcontextprotocol.spec.McpSchema.Content c : legacy.content()) {
            if (c instanceof io.modelcontextprotocol.spec.McpSchema.TextContent text) {
                b.addContent(McpSchema.TextContent.builder(text.text()).build());
            }
        }
        return b.build();
    }
}
