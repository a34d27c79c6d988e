package dev.idempotency.mcp;

import static dev.idempotency.mcp.AbstractMcpToolsTest.call;
import static dev.idempotency.mcp.AbstractMcpToolsTest.hold;
import static dev.idempotency.mcp.AbstractMcpToolsTest.refund;
import static dev.idempotency.mcp.AbstractMcpToolsTest.structured;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * An executor built without {@link McpIdempotentTools#principalScope()} would let every principal share one key
 * space: the adapter notices, runs nothing and never hands out a replay that may be another user's.
 */
class UnscopedExecutorTest {

    private final RefundTools tools = new RefundTools();
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final List<McpSyncClient> clients = new ArrayList<>();
    private IdempotentExecutor executor;
    private InMemoryTransport transport;
    private McpSyncServer server;

    @BeforeEach
    void start() {
        McpConfirmations confirmations = McpConfirmations.builder(McpServerFixture.SECRET, store).tokens(true).build();
        executor = IdempotentExecutor.builder(store).confirmationGate(confirmations).build();  // no principal scope
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).confirmations(confirmations)
                .tool(tools.holdFunds).tool(tools.refund).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        transport = new InMemoryTransport(json);
        server = McpServer.sync(transport).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcp.specifications()).build();
    }

    @AfterEach
    void stop() {
        clients.forEach(McpSyncClient::closeGracefully);
        server.closeGracefully();
    }

    private McpSyncClient client(String principal) {
        McpSyncClient c = McpClient.sync(transport.client(principal.isEmpty() ? McpTransportContext.EMPTY
                : McpTransportContext.create(Map.of(McpMeta.PRINCIPAL, principal))))
                .requestTimeout(Duration.ofSeconds(30)).build();
        c.initialize();
        clients.add(c);
        return c;
    }

    @Test
    void aCallWithAPrincipalRunsNothing() {
        McpSyncClient alice = client("alice");
        CallToolResult hold = call(alice, "hold_funds", hold("A-1", 100, "k-1"), Map.of());
        CallToolResult refund = call(alice, "refund", refund("A-1", 100, "k-2"), Map.of());

        for (CallToolResult r : List.of(hold, refund)) {
            assertThat(structured(r)).containsEntry("error", "server_misconfigured");
            assertThat(structured(r).get("message").toString()).contains("McpIdempotentTools.principalScope()");
        }
        assertThat(tools.holds).hasValue(0);
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void aRecordedResultOfTheSharedKeySpaceIsNeverReplayedToAPrincipal() throws Exception {
        RefundTools.HoldArgs args = new RefundTools.HoldArgs("B-9", 200);
        executor.execute(tools.holdFunds.operation(), "shared", new Object[] {args},
                () -> new RefundTools.Hold("someone else's", "B-9", 200));

        CallToolResult r = call(client("alice"), "hold_funds", hold("B-9", 200, "shared"), Map.of());

        assertThat(structured(r)).containsEntry("error", "server_misconfigured").doesNotContainValue("someone else's");
        assertThat(r.toString()).doesNotContain("someone else's");
    }

    @Test
    void withoutAPrincipalThereIsNothingToScopeAndTheCallRuns() {
        CallToolResult r = call(client(""), "hold_funds", hold("A-1", 100, "k-1"), Map.of());

        assertThat(r.isError()).isFalse();
        assertThat(tools.holds).hasValue(1);
    }
}
