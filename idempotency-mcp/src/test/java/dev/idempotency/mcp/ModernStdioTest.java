package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.transport.StdioMcpClientTransport;
import io.modelcontextprotocol.modern.server.transport.StdioMcpTransport;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tools on the 2026-07-28 revision over stdio (the SDK's {@code StdioMcpTransport}, its streams piped to the
 * SDK's 2026-07-28 stdio client in-process): no {@code initialize}, a retry replays, a refund asks its user first,
 * and the server ends when its input ends.
 */
class ModernStdioTest {

    private static final McpJsonMapper JSON = new JacksonMcpJsonMapper(JsonMapper.builder().build());

    @Test
    void theToolsServeAStdioClientAndTheServerEndsWithItsInput() throws Exception {
        RefundTools tools = new RefundTools();
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        McpConfirmations confirmations = McpConfirmations.builder(McpServerFixture.SECRET, store).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).scope(McpIdempotentTools.principalScope())
                .confirmationGate(confirmations).build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).confirmations(confirmations)
                .tool(tools.holdFunds).tool(tools.refund).build();
        PipedOutputStream toServer = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 16);
        PipedOutputStream toClient = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toClient, 1 << 16);
        StdioMcpTransport server = new StdioMcpTransport(mcp.modernServer("refund-test", "1", JSON), JSON,
                serverIn, toClient);
        CompletableFuture<Void> ended = server.start().toFuture();
        StdioMcpClientTransport transport = StdioMcpClientTransport.builder(clientIn, toServer).jsonMapper(JSON)
                .start();
        McpSyncClient client = McpClient.sync(transport).jsonMapper(JSON)
                .formElicitation(request -> McpSchema.ElicitResult.accept(Map.of("confirm", true))).build();
        Map<String, Object> hold = Map.of("orderId", "A-1", "cents", 4999, McpMeta.KEY_ARGUMENT, "k-1");
        Map<String, Object> refund = Map.of("orderId", "A-1", "cents", 4999, McpMeta.KEY_ARGUMENT, "r-1");

        assertThat(client.tools().list().tools()).extracting(McpSchema.Tool::name)
                .containsExactly("hold_funds", "refund");
        client.tool("hold_funds").arguments(hold).call();
        McpSchema.CallToolResult replayed = client.tool("hold_funds").arguments(hold).call();
        McpSchema.CallToolResult refunded = client.tool("refund").arguments(refund).call();

        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(tools.holds).hasValue(1);
        assertThat(refunded.isError()).isFalse();
        assertThat(tools.refunds).hasValue(1);
        assertThat(confirmations.answers("", "Payments.refund", "r-1")).singleElement()
                .satisfies(a -> assertThat(a.confirmed()).isTrue());

        toServer.close();  // end of input
        ended.get(30, TimeUnit.SECONDS);
        assertThat(ended).isDone();
        transport.close();
    }
}
