package dev.idempotency.mcp;

import static dev.idempotency.mcp.AbstractMcpToolsTest.call;
import static dev.idempotency.mcp.AbstractMcpToolsTest.properties;
import static dev.idempotency.mcp.AbstractMcpToolsTest.structured;
import static dev.idempotency.mcp.AbstractMcpToolsTest.token;
import static dev.idempotency.mcp.AbstractMcpToolsTest.withToken;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.spring.EnableIdempotency;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/**
 * A Spring bean's {@code @Idempotent} methods as tools: the call goes through the bean's proxy, so the aspect claims
 * the key (given to it as the {@code idempotencyKey} parameter), with the context's scope and confirmation gate.
 */
class SpringBeanToolsTest {

    public record Receipt(String refundId, String orderId, long cents) {
    }

    public static class Refunds {
        private final AtomicInteger executed = new AtomicInteger();

        /** Through the proxy (a CGLIB proxy's own fields are never initialised). */
        public int executed() {
            return executed.get();
        }

        @Idempotent(tier = Tier.READ_ONLY)
        public String status(String orderId) {
            return orderId + " DELIVERED";
        }

        @Idempotent(key = "'REFUND:' + #idempotencyKey", tier = Tier.IRREVERSIBLE, operation = "refund", ttl = "7d")
        public Receipt refund(String orderId, long cents, String idempotencyKey) {
            return new Receipt("R-" + executed.incrementAndGet(), orderId, cents);
        }
    }

    public static class ModelKeyed {
        @Idempotent(key = "'REFUND:' + #orderId", tier = Tier.IRREVERSIBLE)
        public String refund(String orderId, String idempotencyKey) {
            return orderId;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class Config {
        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        IdempotencyScope scope() {
            return McpIdempotentTools.principalScope();
        }

        @Bean
        McpConfirmations confirmations(InMemoryIdempotencyStore store) {
            return McpConfirmations.builder(McpServerFixture.SECRET, store).tokens(true).build();
        }

        @Bean
        Refunds refunds() {
            return new Refunds();
        }
    }

    private AnnotationConfigApplicationContext context;
    private McpSyncServer server;
    private InMemoryTransport transport;
    private final List<McpSyncClient> clients = new ArrayList<>();
    private Refunds refunds;

    @BeforeEach
    void start() {
        context = new AnnotationConfigApplicationContext(Config.class);
        refunds = context.getBean(Refunds.class);
        McpIdempotentTools tools = McpIdempotentTools.builder(context.getBean(IdempotentExecutor.class))
                .confirmations(context.getBean(McpConfirmations.class)).bean(refunds).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        transport = new InMemoryTransport(json);
        server = McpServer.sync(transport).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools.specifications()).build();
    }

    @AfterEach
    void stop() {
        clients.forEach(McpSyncClient::closeGracefully);
        server.closeGracefully();
        context.close();
    }

    private McpSyncClient client(String principal) {
        McpSyncClient c = McpClient.sync(transport.client(McpTransportContext.create(Map.of(McpMeta.PRINCIPAL,
                principal)))).requestTimeout(Duration.ofSeconds(30)).build();
        c.initialize();
        clients.add(c);
        return c;
    }

    @Test
    void theBeansMethodsAreListedWithTheirTierAndTheirParametersAsArguments() {
        Map<String, McpSchema.Tool> listed = new java.util.HashMap<>();
        client("alice").listTools().tools().forEach(t -> listed.put(t.name(), t));

        assertThat(listed).containsOnlyKeys("Refunds.status", "refund");
        assertThat(listed.get("Refunds.status").annotations().readOnlyHint()).isTrue();
        assertThat(properties(listed.get("Refunds.status"))).containsOnlyKeys("orderId");
        McpSchema.Tool refund = listed.get("refund");
        assertThat(refund.meta()).containsEntry(McpMeta.TIER, "IRREVERSIBLE").containsEntry(McpMeta.TTL, "PT168H");
        assertThat(refund.annotations().destructiveHint()).isTrue();
        assertThat(properties(refund)).containsOnlyKeys("orderId", "cents", "idempotencyKey", "confirmationToken");
        assertThat(refund.inputSchema().get("required")).isEqualTo(List.of("orderId", "cents"));
    }

    @Test
    void aRefundThroughTheAspectIsConfirmedOnceRunsOnceAndReplaysPerPrincipal() {
        McpSyncClient alice = client("alice");
        Map<String, Object> args = Map.of("orderId", "A-1", "cents", 4999, "idempotencyKey", "k-1");
        CallToolResult asked = call(alice, "refund", args, Map.of());
        McpConfirmations confirmations = context.getBean(McpConfirmations.class);
        confirmations.approve("alice", "refund", "REFUND:k-1",
                confirmations.pending("alice", "refund", "REFUND:k-1").orElseThrow().argumentDigest(),
                new ResolvedBy("approver", "checked the order"));
        CallToolResult ran = call(alice, "refund", withToken(args, token(asked)), Map.of());
        CallToolResult replayed = call(alice, "refund", args, Map.of());
        CallToolResult bobs = call(client("bob"), "refund", args, Map.of());

        assertThat(structured(ran)).containsEntry("refundId", "R-1").containsEntry("cents", 4999);
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true).containsEntry(McpMeta.KEY, "k-1");
        assertThat(structured(bobs)).containsEntry("error", "confirmation_required");
        assertThat(refunds.executed()).isEqualTo(1);
        assertThat(structured(call(alice, "Refunds.status", Map.of("orderId", "A-1"), Map.of())))
                .containsEntry("result", "A-1 DELIVERED");
    }

    @Test
    void aBeanWhoseKeyIsNotTheAdaptersOrThatIsNoProxyIsRefused() {
        assertThatThrownBy(() -> McpIdempotentTools.builder(context.getBean(IdempotentExecutor.class))
                .bean(new ModelKeyed()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ModelKeyed.refund is IRREVERSIBLE")
                .hasMessageContaining("key on it, such as key = \"'REFUND:' + #idempotencyKey\"");
        assertThatThrownBy(() -> McpIdempotentTools.builder(context.getBean(IdempotentExecutor.class))
                .bean(new Refunds()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a Spring proxy");
    }
}
