package dev.idempotency.mcp.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP door over real HTTP (a Spring Boot application on an embedded Tomcat, random port): a foreign
 * {@code Origin} or {@code Host} is refused (DNS rebinding), localhost and the configured ones are served, and every
 * error the endpoint gives is a JSON-RPC error object without Java internals.
 *
 * <p>The {@code Host} header is set by hand: the module's Surefire run allows it
 * ({@code jdk.httpclient.allowRestrictedHeaders=host}).
 */
class McpHttpDoorTest {

    private static final String INITIALIZE = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
             "capabilities":{},"clientInfo":{"name":"door-test","version":"1.0.0"}}}""";
    private static final String LIST_TOOLS = """
            {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}""";
    /** A 2026-07-28 request: no session, its version and capabilities in _meta, its method in a header. */
    private static final String MODERN_LIST_TOOLS = """
            {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{
             "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}""";
    private static final Map<String, String> MODERN = Map.of("Mcp-Method", "tools/list",
            "MCP-Protocol-Version", "2026-07-28");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static ConfigurableApplicationContext context;
    private static int port;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        context = new SpringApplicationBuilder(IdempotencyMcpAutoConfigurationTest.App.class)
                .web(WebApplicationType.SERVLET).run("--server.port=0", "--spring.main.banner-mode=off",
                        "--idempotency.mcp.enabled=true",
                        // the localhost defaults, and one more of each
                        "--idempotency.mcp.allowed-origins=http://localhost:*,http://127.0.0.1:*,"
                                + "https://agent.example.com",
                        "--idempotency.mcp.allowed-hosts=localhost:*,127.0.0.1:*,[::1]:*,mcp.example.com",
                        "--spring.datasource.url=jdbc:h2:mem:mcp-door-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        port = ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    private static HttpResponse<String> send(String method, String body, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/mcp"))
                .timeout(Duration.ofSeconds(30))
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::setHeader);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String body, Map<String, String> headers) throws Exception {
        return send("POST", body, headers);
    }

    /** The body is one JSON-RPC error object with a code and a message, and nothing of Java in it. */
    private static JsonNode assertJsonRpcError(HttpResponse<String> response, int status) {
        return assertJsonRpcError(response, status, null);
    }

    /** ... and the request's id when the transport read the request ({@code null}: no id, a JSON null). */
    private static JsonNode assertJsonRpcError(HttpResponse<String> response, int status, Integer id) {
        assertThat(response.statusCode()).as("%s", response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/json"));
        assertThat(response.body()).doesNotContain("Exception", "at dev.", "at io.", "java.", "io.modelcontext",
                "stackTrace", "tools.jackson", "$");
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.properties()).extracting(Map.Entry::getKey).containsExactlyInAnyOrder("jsonrpc", "id", "error");
        assertThat(body.get("jsonrpc").asString()).isEqualTo("2.0");
        if (id == null) {
            assertThat(body.get("id").isNull()).as("id").isTrue();
        } else {
            assertThat(body.get("id").asInt()).as("id").isEqualTo(id);
        }
        assertThat(body.get("error").get("code").isInt()).isTrue();
        assertThat(body.get("error").get("message").asString()).isNotBlank();
        return body.get("error");
    }

    @Test
    void aForeignOriginIsRefusedWithAJsonRpcError() throws Exception {
        JsonNode error = assertJsonRpcError(post(INITIALIZE, Map.of("Origin", "http://evil.example.com")), 403);

        assertThat(error.get("message").asString()).contains("Origin");
    }

    @Test
    void aForeignOriginOnLocalhostsPortIsRefusedToo() throws Exception {
        assertJsonRpcError(post(INITIALIZE, Map.of("Origin", "http://evil.example.com:" + port)), 403);
    }

    @Test
    void aForeignHostIsRefusedWithAJsonRpcError() throws Exception {
        JsonNode error = assertJsonRpcError(post(INITIALIZE, Map.of("Host", "evil.example.com:" + port)), 421);

        assertThat(error.get("message").asString()).contains("Host");
    }

    @Test
    void aModernRequestWithoutASessionIsServedOnTheSamePath() throws Exception {
        HttpResponse<String> listed = post(MODERN_LIST_TOOLS, MODERN);

        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        assertThat(listed.body()).contains("\"hold_funds\"", "\"refund\"");
    }

    @Test
    void aModernRequestFromAForeignOriginOrHostIsRefusedWithAJsonRpcError() throws Exception {
        Map<String, String> origin = new java.util.HashMap<>(MODERN);
        origin.put("Origin", "http://evil.example.com");
        Map<String, String> host = new java.util.HashMap<>(MODERN);
        host.put("Host", "evil.example.com:" + port);

        assertThat(assertJsonRpcError(post(MODERN_LIST_TOOLS, origin), 403).get("message").asString())
                .contains("Origin");
        assertThat(assertJsonRpcError(post(MODERN_LIST_TOOLS, host), 421).get("message").asString())
                .contains("Host");
    }

    @Test
    void aModernRequestThatIsNotJsonIsAJsonRpcError() throws Exception {
        assertJsonRpcError(post("{not json", MODERN), 400);
    }

    @Test
    void theConformanceSuitesRebindingRequestIsRefused() throws Exception {
        HttpResponse<String> rebound = post(INITIALIZE,
                Map.of("Host", "evil.example.com", "Origin", "http://evil.example.com"));

        assertThat(rebound.statusCode()).isBetween(400, 499);
    }

    @Test
    void localhostWithOrWithoutAnOriginIsServed() throws Exception {
        assertThat(post(INITIALIZE, Map.of()).statusCode()).isEqualTo(200);
        assertThat(post(INITIALIZE, Map.of("Origin", "http://localhost:" + port)).statusCode()).isEqualTo(200);
        assertThat(post(INITIALIZE, Map.of("Origin", "http://127.0.0.1:5173", "Host", "localhost:" + port))
                .statusCode()).isEqualTo(200);
        assertThat(post(INITIALIZE, Map.of("Host", "[::1]:" + port)).statusCode()).isEqualTo(200);
    }

    @Test
    void aConfiguredOriginAndHostAreServed() throws Exception {
        assertThat(post(INITIALIZE, Map.of("Origin", "https://agent.example.com")).statusCode()).isEqualTo(200);
        assertThat(post(INITIALIZE, Map.of("Host", "mcp.example.com")).statusCode()).isEqualTo(200);
        // exact: another port of a configured host without ":*" is not that host
        assertJsonRpcError(post(INITIALIZE, Map.of("Host", "mcp.example.com:8443")), 421);
    }

    @Test
    void toolsWorkFromAnAllowedOrigin() {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://localhost:" + port).endpoint("/mcp")
                .requestBuilder(HttpRequest.newBuilder().header("Origin", "https://agent.example.com")).build();
        McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
        try {
            client.initialize();
            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).contains("lookup_order");
            McpSchema.CallToolResult looked = client.callTool(
                    new McpSchema.CallToolRequest("lookup_order", Map.of("orderId", "A-7"), null));
            assertThat(looked.isError()).as("%s", looked).isFalse();
        } finally {
            client.close();
        }
    }

    @Test
    void aBodyThatIsNotJsonIsAParseError() throws Exception {
        JsonNode error = assertJsonRpcError(post("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", Map.of()), 400);

        assertThat(error.get("code").asInt()).isEqualTo(-32700);
    }

    @Test
    void aRequestWithoutASessionIsAnInvalidRequest() throws Exception {
        JsonNode error = assertJsonRpcError(post(LIST_TOOLS, Map.of()), 400, 2);

        assertThat(error.get("code").asInt()).isEqualTo(-32600);
        assertThat(error.get("message").asString()).containsIgnoringCase("Mcp-Session-Id");
    }

    @Test
    void anUnknownSessionIsNotFound() throws Exception {
        String session = "no-such-session-\"<script>";
        JsonNode error = assertJsonRpcError(post(LIST_TOOLS, Map.of("Mcp-Session-Id", session)), 404, 2);

        assertThat(error.get("code").asInt()).isEqualTo(-32001);
        assertThat(error.get("message").asString()).doesNotContain("script");
        assertJsonRpcError(send("GET", null, Map.of("Mcp-Session-Id", "no-such-session")), 404);
        assertJsonRpcError(send("DELETE", null, Map.of("Mcp-Session-Id", "no-such-session")), 404);
    }

    @Test
    void aStreamWithoutASessionIsAnInvalidRequest() throws Exception {
        assertJsonRpcError(send("GET", null, Map.of()), 400);
    }

    @Test
    void anotherHttpMethodIsNotAllowed() throws Exception {
        assertJsonRpcError(send("PUT", LIST_TOOLS, Map.of()), 405);
    }

    @Test
    void anotherContentTypeIsAnInvalidRequest() throws Exception {
        assertJsonRpcError(post(LIST_TOOLS, Map.of("Content-Type", "text/plain")), 415);
    }

    @Test
    void anAllowedOriginNoBrowserSendsStopsTheStartNamingIt() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(IdempotencyMcpAutoConfigurationTest.App.class)
                .web(WebApplicationType.SERVLET).run("--server.port=0", "--spring.main.banner-mode=off",
                        "--idempotency.mcp.enabled=true",
                        "--idempotency.mcp.allowed-origins=https://agent.example.com/",
                        "--spring.datasource.url=jdbc:h2:mem:mcp-door-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
                .close())
                .rootCause().isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("allowed origin \"https://agent.example.com/\"");
    }

    @Test
    void aRequestStateSecretShorterThan32BytesStopsTheStartNamingThePropertyNotTheValue() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(IdempotencyMcpAutoConfigurationTest.App.class)
                .web(WebApplicationType.SERVLET).run("--server.port=0", "--spring.main.banner-mode=off",
                        "--idempotency.mcp.enabled=true", "--idempotency.mcp.request-state-secret=hunter2-too-short",
                        "--spring.datasource.url=jdbc:h2:mem:mcp-door-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
                .close())
                .rootCause().isInstanceOf(IllegalArgumentException.class)
                .hasMessage("idempotency.mcp.request-state-secret must be at least 32 bytes (UTF-8), but has 17; set"
                        + " the same secret on every node")
                .hasMessageNotContaining("hunter2");
    }
}
