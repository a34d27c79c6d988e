package dev.idempotency.mcp;

import static dev.idempotency.mcp.AbstractMcpToolsTest.call;
import static dev.idempotency.mcp.AbstractMcpToolsTest.structured;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** The refusals an agent must act on differently: wait and retry, or stop for a human. */
class ErrorResultsTest {

    record PayArgs(String payee, long cents) {
    }

    record Paid(String payee, int run) {
    }

    private final AtomicInteger runs = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch entered = new CountDownLatch(1);
    private final List<McpSyncClient> clients = new ArrayList<>();
    private InMemoryTransport transport;
    private McpSyncServer server;

    @BeforeEach
    void start() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store)
                .scope(McpIdempotentTools.principalScope()).build();
        IdempotentTool<PayArgs, Paid> slow = IdempotentTool.builder(
                IdempotentOperation.builder("Payments.slow", Tier.REVERSIBLE, ResultType.of(Paid.class))
                        .lockTimeout("200ms").build(),
                PayArgs.class, a -> {
                    entered.countDown();
                    if (!release.await(20, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("never released");
                    }
                    return new Paid(a.payee(), runs.incrementAndGet());
                }).name("slow_pay").build();
        IdempotentTool<PayArgs, Paid> crashing = IdempotentTool.builder(
                IdempotentOperation.builder("Payments.payout", Tier.IRREVERSIBLE, ResultType.of(Paid.class)).build(),
                PayArgs.class, a -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("gateway timed out: did the payout go out?");
                }).name("payout").build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).tool(slow).tool(crashing).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        transport = new InMemoryTransport(json);
        server = McpServer.sync(transport).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcp.specifications()).build();
    }

    @AfterEach
    void stop() {
        release.countDown();
        clients.forEach(McpSyncClient::closeGracefully);
        server.closeGracefully();
    }

    private McpSyncClient client() {
        McpSyncClient c = McpClient.sync(transport.client(McpTransportContext.create(Map.of(McpMeta.PRINCIPAL, "a"))))
                .requestTimeout(Duration.ofSeconds(30)).build();
        c.initialize();
        clients.add(c);
        return c;
    }

    @Test
    void aDuplicateOfACallStillRunningIsToldToRetryTheSameCallLater() throws Exception {
        Map<String, Object> args = Map.of("payee", "p", "cents", 1, "idempotencyKey", "slow-1");
        McpSyncClient first = client();
        CompletableFuture<CallToolResult> running = CompletableFuture.supplyAsync(
                () -> call(first, "slow_pay", args, Map.of()));
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();

        CallToolResult duplicate = call(client(), "slow_pay", args, Map.of());

        assertThat(duplicate.isError()).isTrue();
        assertThat(structured(duplicate)).containsEntry("error", "in_progress").containsEntry("retry", "same_call_later")
                .containsEntry("key", "slow-1").containsKey("retryAfterMs");
        release.countDown();
        assertThat(structured(running.get(20, TimeUnit.SECONDS))).containsEntry("run", 1);
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(call(client(), "slow_pay", args, Map.of()).meta()).containsEntry(McpMeta.REPLAYED, true));
        assertThat(runs).hasValue(1);
    }

    @Test
    void anIrreversibleCallWhoseOutcomeIsUnknownStopsEveryRetryForAHuman() {
        McpSyncClient agent = client();
        Map<String, Object> args = Map.of("payee", "p", "cents", 1, "idempotencyKey", "payout-1");
        CallToolResult failed = call(agent, "payout", args, Map.of());
        CallToolResult retried = call(agent, "payout", args, Map.of());

        assertThat(structured(failed)).containsEntry("error", "tool_failed").containsEntry("retry", "never");
        assertThat(structured(retried)).containsEntry("error", "outcome_unknown").containsEntry("retry", "never")
                .containsEntry("key", "payout-1");
        assertThat(structured(retried).get("action").toString()).contains("a human must look");
        assertThat(runs).hasValue(1);
    }
}
