package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityValidator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tools on the 2026-07-28 revision over HTTP: two embedded Tomcats (two nodes, no session, no sticky routing)
 * on one H2 store, called with the SDK's own 2026-07-28 client.
 */
@SuppressWarnings("deprecation") // the SDK's Origin/Host validator, deprecated in 2.2.0 with no replacement
class ModernHttpTest {

    private static final McpJsonMapper JSON = new JacksonMcpJsonMapper(JsonMapper.builder().build());
    private static final String USER = "X-Test-User";

    private HikariDataSource pool;
    private String table;
    private IdempotencyStore store;
    private final RefundTools tools = new RefundTools();
    private final List<Node> nodes = new ArrayList<>();
    private final List<McpConfirmations> gates = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:mcp-modern-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        pool = new HikariDataSource(config);
        table = "idem_mcpm_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String script = McpServerFixture.script(JdbcDialect.h2())
                .replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8))).execute(pool);
        store = JdbcIdempotencyStore.builder(pool).tableName(table).build();
        nodes.add(new Node(SHARED_STATE_SECRET));
        nodes.add(new Node(SHARED_STATE_SECRET));
    }

    /** The request-state secret of the two nodes; a third node in a test may have another. */
    private static final byte[] SHARED_STATE_SECRET = "request-state secret of every node, 32+ bytes"
            .getBytes(StandardCharsets.UTF_8);

    @AfterEach
    void stop() throws Exception {
        for (Node node : nodes) {
            node.close();
        }
        McpServerFixture.dropTable(new JdbcTemplate(pool), JdbcDialect.h2(), table);
        pool.close();
    }

    /** One node: its own executor, gate and tools on the shared store and secret, its own servlet container. */
    final class Node implements AutoCloseable {
        final McpConfirmations confirmations = McpConfirmations.builder(McpServerFixture.SECRET, store).build();
        final Tomcat tomcat;
        final String url;
        final Path base = Files.createTempDirectory("mcp-modern");

        Node(byte[] requestStateSecret) throws Exception {
            gates.add(confirmations);
            IdempotentExecutor executor = IdempotentExecutor.builder(store)
                    .scope(McpIdempotentTools.principalScope()).confirmationGate(confirmations).build();
            McpIdempotentTools mcp = McpIdempotentTools.builder(executor).confirmations(confirmations)
                    .requestStateSecret(requestStateSecret)
                    .tool(tools.lookupOrder).tool(tools.holdFunds).tool(tools.refund).build();
            HttpServletMcpTransport transport = HttpServletMcpTransport
                    .builder(mcp.modernServer("refund-test", "1", JSON)).jsonMapper(JSON).endpoint("/mcp")
                    .httpHeaderValidator(ServerTransportSecurityValidator.toHttpHeaderValidator(McpHttpGuard
                            .validator(McpHttpGuard.LOCALHOST_ORIGINS, McpHttpGuard.LOCALHOST_HOSTS)))
                    .contextExtractor(request -> McpTransportContext.create(Map.of(McpMeta.PRINCIPAL,
                            request.getHeader(USER) == null ? "" : request.getHeader(USER))))
                    .build();
            tomcat = TomcatMcpServer.start(base, transport, context -> { });
            url = "http://localhost:" + tomcat.getConnector().getLocalPort() + "/mcp";
        }

        McpSyncClient client(String user) {
            return McpClient.sync(HttpClientMcpTransport.builder(url).jsonMapper(JSON)
                            .requestCustomizer(McpHttpRequestCustomizer.fromSync(
                                    (request, headers, context) -> headers.set(USER, user)))
                            .build())
                    // declares form elicitation; a call may answer with a handler of its own
                    .formElicitation(request -> McpSchema.ElicitResult.cancel())
                    .jsonMapper(JSON).build();
        }

        @Override
        public void close() throws org.apache.catalina.LifecycleException {
            tomcat.stop();
            tomcat.destroy();
        }
    }

    private static Map<String, Object> hold(String key) {
        return Map.of("orderId", "A-1", "cents", 4999, McpMeta.KEY_ARGUMENT, key);
    }

    @Test
    void listsTheToolsWithTheirTierAndTheKeyHeader() {
        McpSchema.ListToolsResult listed = nodes.get(0).client("ann").tools().list();

        assertThat(listed.tools()).extracting(McpSchema.Tool::name)
                .containsExactly("lookup_order", "hold_funds", "refund");
        McpSchema.Tool refund = listed.tools().get(2);
        assertThat(refund.annotations().destructiveHint()).isTrue();
        assertThat(refund.annotations().openWorldHint()).isTrue();
        assertThat(listed.tools().get(0).annotations().openWorldHint()).isFalse();
        assertThat(refund.meta()).containsEntry(McpMeta.TIER, "IRREVERSIBLE")
                .containsEntry(McpMeta.CONFIRMATION, "input_required");
        @SuppressWarnings("unchecked")
        Map<String, Object> properties = (Map<String, Object>) refund.inputSchema().get("properties");
        assertThat(properties).containsKey(McpMeta.KEY_ARGUMENT).doesNotContainKey(McpMeta.CONFIRMATION_ARGUMENT);
        assertThat(properties.get(McpMeta.KEY_ARGUMENT).toString()).contains("x-mcp-header");
    }

    @Test
    void aRetryOnTheOtherNodeReplaysTheFirstResult() {
        McpSyncClient first = nodes.get(0).client("ann");
        McpSyncClient second = nodes.get(1).client("ann");

        McpSchema.CallToolResult ran = first.tool("hold_funds").arguments(hold("k-1")).call();
        McpSchema.CallToolResult replayed = second.tool("hold_funds").arguments(hold("k-1")).call();

        assertThat(ran.isError()).isFalse();
        assertThat(ran.meta()).containsEntry(McpMeta.REPLAYED, false).containsEntry(McpMeta.KEY, "k-1");
        assertThat(replayed.isError()).isFalse();
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(replayed.structuredContent()).isEqualTo(ran.structuredContent());
        assertThat(tools.holds).hasValue(1);
        // another user with the same key has a key space of their own
        nodes.get(1).client("bob").tool("hold_funds").arguments(hold("k-1")).call();
        assertThat(tools.holds).hasValue(2);
    }

    @Test
    void theKeyHeaderMirrorsTheArgumentAndAHeaderThatDiffersIsRefused() throws Exception {
        HttpClient http = HttpClient.newHttpClient();

        String mirrored = http.send(holdRequest("k-h", "k-h"), HttpResponse.BodyHandlers.ofString()).body();
        String replayed = http.send(holdRequest("k-h", "k-h"), HttpResponse.BodyHandlers.ofString()).body();
        // a proxy or script that changed the header (or the argument) on the way: the SDK refuses, nothing runs
        String differs = http.send(holdRequest("k-h", "k-other"), HttpResponse.BodyHandlers.ofString()).body();

        assertThat(mirrored).contains("\"" + McpMeta.KEY + "\":\"k-h\"", "\"" + McpMeta.REPLAYED + "\":false");
        assertThat(replayed).contains("\"" + McpMeta.REPLAYED + "\":true");
        assertThat(differs).contains("\"error\"", "-32020").doesNotContain("Exception");
        assertThat(tools.holds).hasValue(1);
    }

    @Test
    void theKeyHeaderAloneIsNoKeySourceAndItsRequestIsAJsonRpcError() throws Exception {
        // the revision makes Mcp-Param-* a mirror of a body value ("Parameter not in arguments: Client MUST omit
        // the header"); the SDK refuses a header without its argument, before any tool runs
        HttpResponse<String> refused = HttpClient.newHttpClient().send(holdRequest(null, "k-only"),
                HttpResponse.BodyHandlers.ofString());

        assertThat(refused.statusCode()).isEqualTo(400);
        JsonNode body = JsonMapper.builder().build().readTree(refused.body());
        assertThat(body.get("jsonrpc").asString()).isEqualTo("2.0");
        assertThat(body.get("id").asInt()).isEqualTo(7);
        assertThat(body.get("error").get("code").asInt()).isEqualTo(-32020);
        assertThat(body.get("error").get("message").asString())
                .isEqualTo("Mcp-Param-Idempotency-Key header present but argument 'idempotencyKey' is absent");
        assertThat(refused.body()).doesNotContain("Exception", "java.", "at io.", "k-only");
        assertThat(tools.holds).hasValue(0);
    }

    private HttpRequest holdRequest(String argument, String header) {
        String body = """
                {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold_funds",
                 "arguments":{"orderId":"A-1","cents":4999%s},
                 "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities":{}}}}""".formatted(
                argument == null ? "" : ",\"idempotencyKey\":\"" + argument + "\"");
        return HttpRequest.newBuilder(URI.create(nodes.get(0).url))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("Mcp-Method", "tools/call").header("Mcp-Name", "hold_funds")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Param-Idempotency-Key", header)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    @Test
    void anIrreversibleCallAsksItsUserFirstAndRunsOnceAfterTheirYes() {
        McpSyncClient client = nodes.get(0).client("ann");
        Map<String, Object> args = Map.of("orderId", "A-1", "cents", 4999, McpMeta.KEY_ARGUMENT, "r-1");

        McpSchema.CallToolOutcome first = client.tool("refund").arguments(args).callOnce();

        assertThat(first).isInstanceOf(McpSchema.InputRequiredResult.class);
        McpSchema.InputRequiredResult asked = (McpSchema.InputRequiredResult) first;
        assertThat(asked.resultType()).isEqualTo(McpSchema.ResultType.INPUT_REQUIRED);
        assertThat(asked.requestState()).isNotBlank();
        McpSchema.ElicitFormRequest question = (McpSchema.ElicitFormRequest)
                ((McpSchema.ElicitInputRequest) asked.inputRequests().get(ModernTools.CONFIRM)).params();
        assertThat(question.message()).contains("refund", "r-1", "A-1", "4999").doesNotContain(asked.requestState());
        assertThat(tools.refunds).hasValue(0);

        // the same request re-sent without an answer, or with the state but no answer, runs nothing
        assertThat(client.tool("refund").arguments(args).callOnce())
                .isInstanceOf(McpSchema.InputRequiredResult.class);
        assertThat(client.tool("refund").arguments(args).requestState(asked.requestState()).callOnce())
                .isInstanceOf(McpSchema.InputRequiredResult.class);
        assertThat(tools.refunds).hasValue(0);

        // the re-sent request with the user's yes, on the other node, runs it once
        McpSchema.CallToolOutcome done = nodes.get(1).client("ann").tool("refund").arguments(args)
                .requestState(asked.requestState())
                .inputResponses(Map.of(ModernTools.CONFIRM, Map.of("action", "accept", "content",
                        Map.of("confirm", true))))
                .callOnce();

        assertThat(done).isInstanceOf(McpSchema.CallToolResult.class);
        assertThat(((McpSchema.CallToolResult) done).isError()).isFalse();
        assertThat(tools.refunds).hasValue(1);
        List<McpConfirmations.Answer> answers = gates.get(0).answers("ann", "Payments.refund", "r-1");
        assertThat(answers).singleElement().satisfies(a -> {
            assertThat(a.action()).isEqualTo("accept");
            assertThat(a.confirmed()).isTrue();
            assertThat(a.principal()).isEqualTo("ann");
            assertThat(a.shown()).isEqualTo(question.message());
        });

        // the same state and yes sent again: a replay of the recorded result, nothing runs twice
        McpSchema.CallToolResult again = client.tool("refund").arguments(args).call();
        assertThat(again.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void theClientsElicitationHandlerAnswersAndTheToolRunsOnce() {
        AtomicReference<String> shown = new AtomicReference<>();
        McpSyncClient client = nodes.get(0).client("ann");
        Map<String, Object> args = Map.of("orderId", "A-2", "cents", 1200, McpMeta.KEY_ARGUMENT, "r-2");

        McpSchema.CallToolResult result = client.tool("refund").arguments(args)
                .formElicitation(request -> {
                    shown.set(request.message());
                    return McpSchema.ElicitResult.accept(Map.of("confirm", true));
                }).call();

        assertThat(result.isError()).isFalse();
        assertThat(shown.get()).contains("r-2", "1200");
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void aDeclinedConfirmationRunsNothingAndIsRecorded() {
        McpSyncClient client = nodes.get(0).client("ann");
        Map<String, Object> args = Map.of("orderId", "A-3", "cents", 700, McpMeta.KEY_ARGUMENT, "r-3");

        McpSchema.CallToolResult result = client.tool("refund").arguments(args)
                .formElicitation(request -> McpSchema.ElicitResult.decline()).call();

        assertThat(result.isError()).isTrue();
        assertThat(result.structuredContent().toString()).contains(ToolResults.CONFIRMATION_DECLINED);
        assertThat(tools.refunds).hasValue(0);
        assertThat(gates.get(0).answers("ann", "Payments.refund", "r-3")).singleElement()
                .satisfies(a -> assertThat(a.action()).isEqualTo("decline"));
    }

    @Test
    void aNodeWithAnotherRequestStateSecretRefusesTheReSentRequestAndNothingRunsTwice() throws Exception {
        Node other = new Node("another request-state secret, also 32+ bytes".getBytes(StandardCharsets.UTF_8));
        nodes.add(other);
        Map<String, Object> args = Map.of("orderId", "A-5", "cents", 500, McpMeta.KEY_ARGUMENT, "r-5");
        Map<String, Object> yes = Map.of(ModernTools.CONFIRM, Map.of("action", "accept", "content",
                Map.of("confirm", true)));
        McpSchema.InputRequiredResult asked = (McpSchema.InputRequiredResult) nodes.get(0).client("ann")
                .tool("refund").arguments(args).callOnce();

        // the user's yes lands on the node with another secret: a JSON-RPC error naming the state, nothing runs
        assertThatThrownBy(() -> other.client("ann").tool("refund").arguments(args)
                .requestState(asked.requestState()).inputResponses(yes).callOnce())
                .hasMessageContaining("Invalid or expired requestState");
        assertThat(tools.refunds).hasValue(0);
        // the same re-send on a node with the shared secret runs it, once
        McpSchema.CallToolOutcome done = nodes.get(1).client("ann").tool("refund").arguments(args)
                .requestState(asked.requestState()).inputResponses(yes).callOnce();
        assertThat(((McpSchema.CallToolResult) done).isError()).isFalse();
        assertThat(tools.refunds).hasValue(1);
        // sent again to either: refused by the one, replayed by the other; never a second refund
        assertThatThrownBy(() -> other.client("ann").tool("refund").arguments(args)
                .requestState(asked.requestState()).inputResponses(yes).callOnce())
                .hasMessageContaining("Invalid or expired requestState");
        McpSchema.CallToolResult replayed = other.client("ann").tool("refund").arguments(args).call();
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void aRequestStateSecretShorterThan32BytesIsRefusedAtBuild() {
        assertThatThrownBy(() -> McpIdempotentTools.builder(IdempotentExecutor.builder(store).build())
                .requestStateSecret("too short".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the request-state secret must be at least 32 bytes (HMAC-SHA256), but has 9; give every"
                        + " node the same one");
    }

    @Test
    void stateMadeForOtherArgumentsOrAnotherUserRunsNothing() {
        Map<String, Object> args = Map.of("orderId", "A-4", "cents", 100, McpMeta.KEY_ARGUMENT, "r-4");
        McpSchema.InputRequiredResult asked = (McpSchema.InputRequiredResult) nodes.get(0).client("ann")
                .tool("refund").arguments(args).callOnce();
        Map<String, Object> yes = Map.of(ModernTools.CONFIRM, Map.of("action", "accept", "content",
                Map.of("confirm", true)));

        // other arguments under the same key: asked again, nothing runs
        Map<String, Object> other = Map.of("orderId", "A-4", "cents", 99_999, McpMeta.KEY_ARGUMENT, "r-4");
        assertThat(nodes.get(0).client("ann").tool("refund").arguments(other).requestState(asked.requestState())
                .inputResponses(yes).callOnce()).isInstanceOf(McpSchema.InputRequiredResult.class);
        // another user: the state does not open for them (a JSON-RPC error), nothing runs
        assertThatThrownBy(() -> nodes.get(1).client("bob").tool("refund").arguments(args)
                .requestState(asked.requestState()).inputResponses(yes).callOnce())
                .hasMessageContaining("requestState");
        // a forged state: refused the same way
        assertThatThrownBy(() -> nodes.get(1).client("ann").tool("refund").arguments(args)
                .requestState(asked.requestState() + "x").inputResponses(yes).callOnce())
                .hasMessageContaining("requestState");
        assertThat(tools.refunds).hasValue(0);
    }
}
