package dev.idempotency.sample.refund;

import dev.idempotency.mcp.McpMeta;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpTimeoutException;
import io.modelcontextprotocol.modern.client.transport.StdioMcpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import java.io.File;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * An agent, scripted: it starts {@link RefundServer} as a subprocess over stdio with the SDK's own client and plays
 * the story every agent framework meets. The refund call times out on the client side while the gateway is still
 * working; the agent retries the same turn twice (and, before that, a hold whose transaction fails to commit is
 * released by its compensation and held again on retry); then the "model" regenerates the call with a rounded amount. It
 * prints what each call got, and how many refunds the gateway really executed: one.
 *
 * <p>{@code mvn -q -pl samples/refund-agent -am package -DskipTests exec:java}
 */
public final class ScriptedAgent {

    private static final String ORDER = "A-1001";

    private ScriptedAgent() {
    }

    public static void main(String[] args) {
        int refunds;
        try {
            refunds = run(serverCommand(List.of(args)), System.out);
        } catch (StoryStopped e) {
            System.out.println(e.getMessage());
            System.exit(1);
            return;
        }
        if (refunds != 1) {
            System.exit(1);
        }
    }

    /** The server answered a step of the story with an error the story does not expect (a store down, say). */
    static final class StoryStopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StoryStopped(String step, Answer r) {
            super("the story stops at " + step + ": the server answered " + r.structured());
        }
    }

    /** A tool call's answer, whichever revision carried it. */
    record Answer(boolean error, Map<String, Object> structured, boolean replayed) {

        String describe() {
            return error ? structured.get("error") + " (retry: " + structured.get("retry") + ")"
                    : structured + (replayed ? " (replayed)" : "");
        }
    }

    /** The agent's MCP client, on one revision. */
    interface Client extends AutoCloseable {

        /** One line per tool: name, tier and hints. */
        List<String> tools();

        /** A call of the turn (and step), named in {@code _meta} by the client runtime, not the model. */
        Answer call(String tool, Map<String, Object> arguments, String turn, String step);

        /**
         * The irreversible call: the server asks first, the user says yes (printed to {@code out}), and the
         * confirmed call is sent with the agent's own timeout; null when no answer came within it.
         */
        Answer confirmed(String tool, Map<String, Object> arguments, String turn, Duration timeout,
                PrintStream out);

        @Override
        void close();
    }

    /** {@code r}, unless it is an error other than {@code expectedError} (null: none expected). */
    static Answer expect(String step, Answer r, String expectedError) {
        if (r.error() && (expectedError == null || !expectedError.equals(r.structured().get("error")))
                || !r.error() && expectedError != null) {
            throw new StoryStopped(step, r);
        }
        return r;
    }

    /** The command that starts the server with this JVM and this class path. */
    static List<String> serverCommand(List<String> serverArguments) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(classPath());
        command.add(RefundServer.class.getName());
        command.addAll(serverArguments);
        return command;
    }

    /**
     * Plays the story against the server started by {@code command} (on 2026-07-28 when the command says
     * {@code --revision 2026-07-28}); returns the refunds the gateway executed.
     */
    static int run(List<String> command, PrintStream out) {
        ServerParameters server = ServerParameters.builder(command.get(0)).args(command.subList(1, command.size()))
                .build();
        int revision = command.indexOf("--revision");
        boolean modern = revision >= 0 && RefundServer.MODERN.equals(command.get(revision + 1));
        try (Client client = modern ? new ModernClient(server) : new LegacyClient(server)) {
            client.tools().forEach(out::println);
            Answer order = expect("lookup_order", client.call("lookup_order", Map.of("orderId", ORDER), "turn-1",
                    null), null);
            out.println("lookup_order " + ORDER + ": " + order.structured());
            Answer hold = expect("hold_funds", client.call("hold_funds",
                    Map.of("orderId", ORDER, "cents", 4999), "turn-1", "hold"), null);
            out.println("hold_funds: " + hold.structured());
            Map<String, Object> hold2 = Map.of("orderId", "A-1002", "cents", 12000);
            Answer refused = client.call("hold_funds", hold2, "turn-1", "hold-2");
            out.println("hold_funds A-1002: " + refused.describe() + ", the ledger refused the commit");
            Answer held = client.call("hold_funds", hold2, "turn-1", "hold-2");
            out.println("hold_funds A-1002 retry: " + held.describe());

            Map<String, Object> refund = Map.of("orderId", ORDER, "cents", 4999);
            // the agent's own timeout is shorter than the gateway: it gives up, the refund goes on
            Answer r = client.confirmed("refund", refund, "turn-2", Duration.ofSeconds(1), out);
            out.println(r != null ? "refund: " + r.structured()
                    : "refund: no answer within 1 s (client-side timeout); retrying the same turn");
            for (int attempt = 1; attempt <= 2; attempt++) {
                out.println("refund retry " + attempt + ": " + client.call("refund", refund, "turn-2", null)
                        .describe());
            }
            Map<String, Object> regenerated = Map.of("orderId", ORDER, "cents", 5000);
            out.println("the model regenerates the call with 5000 cents: "
                    + client.call("refund", regenerated, "turn-2", null).describe());

            Answer after = expect("the last lookup_order",
                    client.call("lookup_order", Map.of("orderId", ORDER), "turn-3", null), null);
            int executed = ((Number) after.structured().get("refundsExecuted")).intValue();
            out.println("holds released by compensation: " + after.structured().get("holdsReleased"));
            out.println("refunds executed: " + executed);
            return executed;
        }
    }

    /** The {@code _meta} a client runtime sends: the turn, and the step when there is one. */
    static Map<String, Object> turn(String turn, String step) {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put(McpMeta.TURN_ID, turn);
        if (step != null) {
            meta.put(McpMeta.STEP_ID, step);
        }
        return meta;
    }

    @SuppressWarnings("unchecked")
    static Answer answer(Boolean error, Object structured, Map<String, Object> meta) {
        return new Answer(Boolean.TRUE.equals(error), (Map<String, Object>) structured,
                meta != null && Boolean.TRUE.equals(meta.get(McpMeta.REPLAYED)));
    }

    /**
     * 2025-11-25: initialize first; the client declares elicitation, and its handler is the user's screen: the server
     * asks the refund's question there while the call waits, and the user says yes.
     */
    static final class LegacyClient implements Client {
        private final McpAsyncClient client;
        private volatile PrintStream screen = System.out;

        LegacyClient(ServerParameters server) {
            client = McpClient.async(new StdioClientTransport(server,
                            new JacksonMcpJsonMapper(JsonMapper.builder().build())))
                    .requestTimeout(Duration.ofSeconds(30)).initializationTimeout(Duration.ofSeconds(60))
                    .capabilities(io.modelcontextprotocol.spec.McpSchema.ClientCapabilities.builder().elicitation()
                            .build())
                    .elicitation(question -> {
                        screen.println("refund: elicitation (" + question.message() + ") -> the user says yes");
                        return reactor.core.publisher.Mono.just(new io.modelcontextprotocol.spec.McpSchema
                                .ElicitResult(io.modelcontextprotocol.spec.McpSchema.ElicitResult.Action.ACCEPT,
                                Map.of("confirm", true)));
                    })
                    .build();
            client.initialize().block(Duration.ofSeconds(60));
        }

        @Override
        public List<String> tools() {
            return client.listTools().block(Duration.ofSeconds(30)).tools().stream()
                    .map(t -> line(t.name(), t.meta(), t.annotations().readOnlyHint(),
                            t.annotations().destructiveHint()))
                    .toList();
        }

        @Override
        public Answer call(String tool, Map<String, Object> arguments, String turn, String step) {
            return request(tool, arguments, turn(turn, step)).block(Duration.ofSeconds(30));
        }

        private reactor.core.publisher.Mono<Answer> request(String tool, Map<String, Object> arguments,
                Map<String, Object> meta) {
            return client.callTool(new CallToolRequest(tool, arguments, meta))
                    .map(r -> answer(r.isError(), r.structuredContent(), r.meta()));
        }

        @Override
        public Answer confirmed(String tool, Map<String, Object> arguments, String turn, Duration timeout,
                PrintStream out) {
            screen = out;
            try {
                return request(tool, arguments, turn(turn, null)).block(timeout);
            } catch (IllegalStateException timedOut) {
                return null;
            }
        }

        @Override
        public void close() {
            client.closeGracefully().block(Duration.ofSeconds(10));
        }
    }

    /** 2026-07-28: no initialize; the server asks by input_required, the user answers, the request is re-sent. */
    static final class ModernClient implements Client {
        private final StdioMcpClientTransport transport;
        private final io.modelcontextprotocol.modern.client.McpSyncClient client;

        ModernClient(ServerParameters server) {
            McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
            transport = StdioMcpClientTransport.builder(server).jsonMapper(json).start();
            client = io.modelcontextprotocol.modern.client.McpClient.sync(transport).jsonMapper(json)
                    // declares form elicitation, which the refund's question needs; the story answers it itself
                    .formElicitation(request -> McpSchema.ElicitResult.cancel()).build();
        }

        @Override
        public List<String> tools() {
            return client.tools().list().tools().stream()
                    .map(t -> line(t.name(), t.meta(), t.annotations().readOnlyHint(),
                            t.annotations().destructiveHint()))
                    .toList();
        }

        @Override
        public Answer call(String tool, Map<String, Object> arguments, String turn, String step) {
            McpSchema.CallToolResult r = client.tool(tool).arguments(arguments).meta(turn(turn, step))
                    .callTimeout(Duration.ofSeconds(30)).call();
            return answer(r.isError(), r.structuredContent(), r.meta());
        }

        @Override
        public Answer confirmed(String tool, Map<String, Object> arguments, String turn, Duration timeout,
                PrintStream out) {
            McpSchema.CallToolOutcome first = client.tool(tool).arguments(arguments).meta(turn(turn, null)).callOnce();
            if (!(first instanceof McpSchema.InputRequiredResult asked)) {
                McpSchema.CallToolResult r = (McpSchema.CallToolResult) first;
                throw new StoryStopped(tool, answer(r.isError(), r.structuredContent(), r.meta()));
            }
            McpSchema.ElicitFormRequest question = (McpSchema.ElicitFormRequest)
                    ((McpSchema.ElicitInputRequest) asked.inputRequests().get("confirm")).params();
            out.println(tool + ": input_required (" + question.message() + ") -> the user says yes");
            try {
                // the original request, re-sent with the user's answer and the server's state, untouched
                McpSchema.CallToolOutcome done = client.tool(tool).arguments(arguments).meta(turn(turn, null))
                        .requestState(asked.requestState())
                        .inputResponses(Map.of("confirm", Map.of("action", "accept", "content",
                                Map.of("confirm", true))))
                        .callTimeout(timeout).callOnce();
                McpSchema.CallToolResult r = (McpSchema.CallToolResult) done;
                return answer(r.isError(), r.structuredContent(), r.meta());
            } catch (McpTimeoutException timedOut) {
                return null;
            }
        }

        @Override
        public void close() {
            transport.close();
        }
    }

    private static String line(String name, Map<String, Object> meta, Boolean readOnly, Boolean destructive) {
        return "tool " + name + ": " + meta.get(McpMeta.TIER) + ", readOnly=" + readOnly + ", destructive="
                + destructive;
    }

    /** This program's class path, also under {@code mvn exec:java} (where it lives in a class loader). */
    private static String classPath() {
        if (ScriptedAgent.class.getClassLoader() instanceof URLClassLoader loader) {
            List<String> entries = new ArrayList<>();
            for (URL url : loader.getURLs()) {
                try {
                    entries.add(Path.of(url.toURI()).toString());
                } catch (URISyntaxException e) {
                    throw new IllegalStateException("class path entry " + url, e);
                }
            }
            return String.join(File.pathSeparator, entries);
        }
        return System.getProperty("java.class.path");
    }
}
