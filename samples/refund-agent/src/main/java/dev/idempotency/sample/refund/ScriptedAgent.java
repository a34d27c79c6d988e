package dev.idempotency.sample.refund;

import dev.idempotency.mcp.McpMeta;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
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

        StoryStopped(String step, CallToolResult r) {
            super("the story stops at " + step + ": the server answered " + r.structuredContent()
                    + (r.structuredContent() == null ? " " + r.content() : ""));
        }
    }

    /** {@code r}, unless it is an error other than {@code expectedError} (null: none expected). */
    static CallToolResult expect(String step, CallToolResult r, String expectedError) {
        boolean error = Boolean.TRUE.equals(r.isError());
        Map<String, Object> s = structured(r);
        if (s == null || error && (expectedError == null || !expectedError.equals(s.get("error")))
                || !error && expectedError != null) {
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

    /** Plays the story against the server started by {@code command}; returns the refunds the gateway executed. */
    static int run(List<String> command, PrintStream out) {
        ServerParameters server = ServerParameters.builder(command.get(0)).args(command.subList(1, command.size()))
                .build();
        StdioClientTransport transport = new StdioClientTransport(server,
                new JacksonMcpJsonMapper(JsonMapper.builder().build()));
        McpAsyncClient client = McpClient.async(transport).requestTimeout(Duration.ofSeconds(30))
                .initializationTimeout(Duration.ofSeconds(60)).build();
        try {
            client.initialize().block(Duration.ofSeconds(60));
            for (McpSchema.Tool tool : client.listTools().block(Duration.ofSeconds(30)).tools()) {
                out.println("tool " + tool.name() + ": " + tool.meta().get(McpMeta.TIER) + ", readOnly="
                        + tool.annotations().readOnlyHint() + ", destructive=" + tool.annotations().destructiveHint());
            }
            CallToolResult order = expect("lookup_order",
                    call(client, "lookup_order", Map.of("orderId", ORDER), "turn-1", null), null);
            out.println("lookup_order " + ORDER + ": " + order.structuredContent());
            CallToolResult hold = expect("hold_funds", call(client, "hold_funds",
                    Map.of("orderId", ORDER, "cents", 4999), "turn-1", "hold"), null);
            out.println("hold_funds: " + hold.structuredContent());
            Map<String, Object> hold2 = Map.of("orderId", "A-1002", "cents", 12000);
            CallToolResult refused = call(client, "hold_funds", hold2, "turn-1", "hold-2");
            out.println("hold_funds A-1002: " + describe(refused) + ", the ledger refused the commit");
            CallToolResult held = call(client, "hold_funds", hold2, "turn-1", "hold-2");
            out.println("hold_funds A-1002 retry: " + describe(held));

            Map<String, Object> refund = Map.of("orderId", ORDER, "cents", 4999);
            CallToolResult asked = expect("refund", call(client, "refund", refund, "turn-2", null),
                    "confirmation_required");
            String token = (String) structured(asked).get("confirmationToken");
            out.println("refund: " + structured(asked).get("error") + " -> the user says yes");
            Map<String, Object> confirmed = new LinkedHashMap<>(refund);
            confirmed.put("confirmationToken", token);
            try {
                // the agent's own timeout is shorter than the gateway: it gives up, the refund goes on
                CallToolResult r = request(client, "refund", confirmed, "turn-2").block(Duration.ofSeconds(1));
                out.println("refund: " + r.structuredContent());
            } catch (IllegalStateException timeout) {
                out.println("refund: no answer within 1 s (client-side timeout); retrying the same turn");
            }
            for (int attempt = 1; attempt <= 2; attempt++) {
                CallToolResult r = call(client, "refund", confirmed, "turn-2", null);
                out.println("refund retry " + attempt + ": " + describe(r));
            }
            Map<String, Object> regenerated = Map.of("orderId", ORDER, "cents", 5000);
            CallToolResult again = call(client, "refund", regenerated, "turn-2", null);
            out.println("the model regenerates the call with 5000 cents: " + describe(again));

            CallToolResult after = expect("the last lookup_order",
                    call(client, "lookup_order", Map.of("orderId", ORDER), "turn-3", null), null);
            int executed = ((Number) structured(after).get("refundsExecuted")).intValue();
            out.println("holds released by compensation: " + structured(after).get("holdsReleased"));
            out.println("refunds executed: " + executed);
            return executed;
        } finally {
            client.closeGracefully().block(Duration.ofSeconds(10));
        }
    }

    private static String describe(CallToolResult r) {
        Map<String, Object> s = structured(r);
        if (Boolean.TRUE.equals(r.isError())) {
            return s.get("error") + " (retry: " + s.get("retry") + ")";
        }
        return s + (Boolean.TRUE.equals(r.meta().get(McpMeta.REPLAYED)) ? " (replayed)" : "");
    }

    private static CallToolResult call(McpAsyncClient client, String tool, Map<String, Object> arguments, String turn,
            String step) {
        return request(client, tool, arguments, step == null ? turn : turn + "|" + step)
                .block(Duration.ofSeconds(30));
    }

    private static reactor.core.publisher.Mono<CallToolResult> request(McpAsyncClient client, String tool,
            Map<String, Object> arguments, String turnAndStep) {
        // the client runtime, not the model, names the turn (and step) the key is derived from
        Map<String, Object> meta = new LinkedHashMap<>();
        String[] parts = turnAndStep.split("\\|");
        meta.put(McpMeta.TURN_ID, parts[0]);
        if (parts.length > 1) {
            meta.put(McpMeta.STEP_ID, parts[1]);
        }
        return client.callTool(new CallToolRequest(tool, arguments, meta));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> structured(CallToolResult r) {
        return (Map<String, Object>) r.structuredContent();
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
