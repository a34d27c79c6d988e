package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The 2025-11-25 stdio transport behind {@link McpStdioGuard}, its streams piped to the test, which writes the client's
 * lines itself: a request before {@code initialize} gets its JSON-RPC error at once (without the guard the SDK never
 * answers it), a ping its result, and after the handshake every message reaches the SDK.
 */
class McpStdioGuardTest {

    private static final McpJsonMapper JSON = new JacksonMcpJsonMapper(JsonMapper.builder().build());
    private static final JsonMapper TREE = JsonMapper.builder().build();

    private final RefundTools tools = new RefundTools();
    private PipedOutputStream toServer;
    /** The server's lines, as it writes them. */
    private final BlockingQueue<String> fromServer = new LinkedBlockingQueue<>();
    private McpSyncServer server;

    @BeforeEach
    void start() throws IOException {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).scope(McpIdempotentTools.principalScope())
                .build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).tool(tools.holdFunds).build();
        toServer = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 16);
        OutputStream toClient = new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public synchronized void write(int b) {
                if (b == '\n') {
                    fromServer.add(line.toString(StandardCharsets.UTF_8));
                    line.reset();
                } else {
                    line.write(b);
                }
            }
        };
        server = McpServer.sync(McpStdioGuard.transport(JSON, serverIn, toClient)).jsonMapper(JSON)
                .serverInfo("guard-test", "1")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcp.specifications()).build();
    }

    @AfterEach
    void stop() throws IOException {
        toServer.close();
        server.closeGracefully();
    }

    private void send(String line) throws IOException {
        toServer.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        toServer.flush();
    }

    /** The server's next line, within five seconds (the SDK alone would never answer the first requests). */
    private JsonNode answer() throws Exception {
        String line = fromServer.poll(5, TimeUnit.SECONDS);
        assertThat(line).as("an answer").isNotNull();
        return TREE.readTree(line);
    }

    @Test
    void requestsBeforeInitializeAreAnsweredAsJsonRpcErrorsAndNothingRuns() throws Exception {
        send("""
                {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}""");
        JsonNode listed = answer();
        send("""
                {"jsonrpc":"2.0","id":"c-2","method":"tools/call","params":{"name":"hold_funds","arguments":\
                {"orderId":"A-1","cents":1,"idempotencyKey":"k-1"}}}""");
        JsonNode called = answer();
        send("""
                {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":\
                {"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}""");
        JsonNode modern = answer();
        send("""
                {"jsonrpc":"2.0","id":4,"method":"ping"}""");
        JsonNode ping = answer();
        send("""
                {"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":\
                {"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}""");
        JsonNode discover = answer();

        assertThat(listed.get("id").asInt()).isEqualTo(1);
        assertThat(listed.get("error").get("code").asInt()).isEqualTo(McpStdioGuard.NOT_INITIALIZED);
        assertThat(listed.get("error").get("message").asString()).startsWith("tools/list before initialize:")
                .contains("send them first");
        assertThat(called.get("id").asString()).isEqualTo("c-2");
        assertThat(called.get("error").get("message").asString()).startsWith("tools/call before initialize:");
        assertThat(modern.get("error").get("code").asInt()).as("not UnsupportedProtocolVersion: the client falls"
                + " back to initialize").isEqualTo(-32600);
        assertThat(modern.get("error").get("message").asString()).contains("protocol version 2026-07-28");
        assertThat(ping.get("id").asInt()).isEqualTo(4);
        assertThat(ping.get("result").isObject()).isTrue();
        assertThat(discover.get("id").asInt()).isEqualTo(5);
        assertThat(discover.get("error").get("code").asInt()).as("the SDK's Method not found").isEqualTo(-32601);
        assertThat(tools.holds).hasValue(0);

        // the handshake, then the SDK serves as always
        send("""
                {"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25",\
                "capabilities":{},"clientInfo":{"name":"test","version":"1"}}}""");
        JsonNode initialized = answer();
        send("""
                {"jsonrpc":"2.0","method":"notifications/initialized"}""");
        send("""
                {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"hold_funds","arguments":\
                {"orderId":"A-1","cents":1,"idempotencyKey":"k-1"}}}""");
        JsonNode held = answer();

        assertThat(initialized.get("id").asInt()).isEqualTo(5);
        assertThat(initialized.get("result").get("protocolVersion").asString()).isEqualTo("2025-11-25");
        assertThat(held.get("id").asInt()).isEqualTo(6);
        assertThat(held.get("result").get("isError").asBoolean()).isFalse();
        assertThat(tools.holds).hasValue(1);
    }
}
