package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.McpTimeoutException;
import io.modelcontextprotocol.modern.client.transport.StdioMcpClientTransport;
import io.modelcontextprotocol.modern.server.transport.StdioMcpTransport;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tools on the 2026-07-28 revision over stdio (the SDK's {@code StdioMcpTransport}, its streams piped to the
 * SDK's 2026-07-28 stdio client in-process): no {@code initialize}, a retry replays, a refund asks its user first,
 * a call the client gave up on finishes, and the server ends when its input ends.
 */
class ModernStdioTest {

    private static final McpJsonMapper JSON = new JacksonMcpJsonMapper(JsonMapper.builder().build());

    private final RefundTools tools = new RefundTools();
    private McpConfirmations confirmations;
    private PipedOutputStream toServer;
    private CompletableFuture<Void> ended;
    private StdioMcpClientTransport transport;
    private McpSyncClient client;

    @BeforeEach
    void start() throws IOException {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        confirmations = McpConfirmations.builder(McpServerFixture.SECRET, store).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).scope(McpIdempotentTools.principalScope())
                .confirmationGate(confirmations).build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).confirmations(confirmations)
                .tool(tools.holdFunds).tool(tools.refund).build();
        toServer = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 16);
        PipedOutputStream toClient = new PipedOutputStream();
        PipedInputStream clientIn = new PipedInputStream(toClient, 1 << 16);
        ended = new StdioMcpTransport(mcp.modernServer("refund-test", "1", JSON), JSON, serverIn, toClient).start()
                .toFuture();
        transport = StdioMcpClientTransport.builder(clientIn, toServer).jsonMapper(JSON).start();
        client = McpClient.sync(transport).jsonMapper(JSON)
                .formElicitation(request -> McpSchema.ElicitResult.accept(Map.of("confirm", true))).build();
    }

    @AfterEach
    void stop() throws IOException {
        toServer.close();
        transport.close();
    }

    @Test
    void theToolsServeAStdioClientAndTheServerEndsWithItsInput() throws Exception {
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
    }

    @Test
    void aCallTheClientGaveUpOnFinishesAndItsRetryReplays() {
        CountDownLatch gate = new CountDownLatch(1);
        tools.holdGate.set(gate);
        Map<String, Object> hold = Map.of("orderId", "A-1", "cents", 4999, McpMeta.KEY_ARGUMENT, "k-cancel");

        // the client's timeout runs out while the hold is under way: it cancels the request
        assertThatThrownBy(() -> client.tool("hold_funds").arguments(hold).callTimeout(Duration.ofMillis(300))
                .call()).isInstanceOf(McpTimeoutException.class);
        gate.countDown();
        McpSchema.CallToolResult retried = client.tool("hold_funds").arguments(hold).call();

        // the hold was not interrupted: it finished, and the retry replays it instead of holding again
        assertThat(retried.isError()).as("%s", retried).isFalse();
        assertThat(retried.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(tools.holds).hasValue(1);
    }
}
