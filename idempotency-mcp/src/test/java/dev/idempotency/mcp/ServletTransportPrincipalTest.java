package dev.idempotency.mcp;

import static dev.idempotency.mcp.AbstractMcpToolsTest.call;
import static dev.idempotency.mcp.AbstractMcpToolsTest.hold;
import static dev.idempotency.mcp.AbstractMcpToolsTest.structured;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import jakarta.servlet.http.HttpServletRequest;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's streamable HTTP servlet transport on an embedded Tomcat: the principal comes from the HTTP request
 * through the transport's context extractor, and keys are scoped to it.
 */
class ServletTransportPrincipalTest {

    @TempDir
    Path base;

    private final RefundTools tools = new RefundTools();
    private final List<McpSyncClient> clients = new ArrayList<>();
    private TomcatMcpServer server;
    private String url;

    /** Stands for the application's authentication: a bearer token names the user. */
    private static String authenticated(HttpServletRequest request) {
        String auth = request.getHeader("Authorization");
        return auth != null && auth.startsWith("Bearer ") ? auth.substring(7).replace("-token", "") : "";
    }

    @BeforeEach
    void start() throws Exception {
        server = new TomcatMcpServer(base, tools.holdFunds, transport -> transport.contextExtractor(
                request -> McpTransportContext.create(Map.of(McpMeta.PRINCIPAL, authenticated(request)))),
                context -> { });
        url = server.url;
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(McpSyncClient::close);
        server.close();
    }

    private McpSyncClient client(String token) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(url).endpoint("/mcp")
                .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + token)).build();
        McpSyncClient c = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
        c.initialize();
        clients.add(c);
        return c;
    }

    @Test
    void twoUsersOverHttpWithOneKeyEachGetTheirOwnResultAndADuplicateReplays() {
        McpSyncClient alice = client("alice-token");
        CallToolResult alices = call(alice, "hold_funds", hold("A-1", 100, "k-1"), Map.of());
        CallToolResult bobs = call(client("bob-token"), "hold_funds", hold("B-9", 200, "k-1"), Map.of());
        CallToolResult alicesAgain = call(alice, "hold_funds", hold("A-1", 100, "k-1"), Map.of());

        assertThat(structured(alices)).containsEntry("orderId", "A-1");
        assertThat(structured(bobs)).containsEntry("orderId", "B-9");
        assertThat(alicesAgain.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(structured(alicesAgain)).isEqualTo(structured(alices));
        assertThat(tools.holds).hasValue(2);
    }
}
