package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link McpHttpGuard} without Spring Boot, set up as its Javadoc shows on an embedded Tomcat: the SDK's transport
 * with the guard's validator serves localhost and tools work through the filter, refuses a foreign {@code Origin} as
 * JSON-RPC, and an exception of the servlet is answered as a JSON-RPC internal error without its text.
 */
@SuppressWarnings("deprecation") // the SDK's Origin/Host validator, deprecated in 2.2.0 with no replacement
class McpHttpGuardTomcatTest {

    private static final String INITIALIZE = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
             "capabilities":{},"clientInfo":{"name":"guard-test","version":"1.0.0"}}}""";

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path base;

    private TomcatMcpServer server;
    private String url;

    @BeforeEach
    void start() throws Exception {
        server = new TomcatMcpServer(base, new RefundTools().holdFunds, transport -> transport.securityValidator(
                McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS, McpHttpGuard.LOCALHOST_HOSTS)), context -> {
                    // a servlet that fails, behind the same guard
                    Tomcat.addServlet(context, "failing", new HttpServlet() {
                        @Override
                        protected void doPost(HttpServletRequest request, HttpServletResponse response) {
                            throw new IllegalStateException("secret detail at dev.idempotency.Internal");
                        }
                    });
                    context.addServletMappingDecoded("/failing", "failing");
                    FilterDef guard = new FilterDef();
                    guard.setFilterName("mcpGuard");
                    guard.setFilter(new McpHttpGuard());
                    guard.setAsyncSupported("true");
                    context.addFilterDef(guard);
                    FilterMap map = new FilterMap();
                    map.setFilterName("mcpGuard");
                    map.addServletName("mcp");
                    map.addServletName("failing");
                    context.addFilterMap(map);
                });
        url = server.url;
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private HttpResponse<String> post(String path, String origin) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30))
                .header("Accept", "application/json, text/event-stream").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE));
        if (origin != null) {
            request.header("Origin", origin);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void toolsWorkThroughTheGuardFromLocalhost() {
        McpSyncClient client = McpClient.sync(HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp")
                .requestBuilder(HttpRequest.newBuilder().header("Origin", "http://localhost:5173")).build())
                .requestTimeout(Duration.ofSeconds(30)).build();
        try {
            client.initialize();
            assertThat(client.listTools().tools()).extracting(McpSchema.Tool::name).containsExactly("hold_funds");
        } finally {
            client.close();
        }
    }

    @Test
    void aForeignOriginIsRefusedAsJsonRpc() throws Exception {
        HttpResponse<String> refused = post("/mcp", "http://evil.example.com");

        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(refused.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,"
                + "\"message\":\"Forbidden: this Origin is not allowed\"}}");
    }

    @Test
    void anExceptionIsAnInternalErrorWithoutItsText() throws Exception {
        HttpResponse<String> failed = post("/failing", null);  // it read no body: no id

        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Content-Type")).hasValue("application/json;charset=UTF-8");
        assertThat(failed.body()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                + "\"message\":\"Internal error\"}}");
    }
}
