package dev.idempotency.mcp.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.ResolvedBy;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.mcp.McpMeta;
import dev.idempotency.mcp.McpTool;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The auto-configuration in a real Spring Boot application on an embedded Tomcat (random port), called over HTTP by
 * the SDK's own streamable HTTP client: the {@code @McpTool} bean's methods are listed with their tiers, a duplicate
 * replays, the key belongs to the request's authenticated user, and an irreversible tool asks first.
 */
class IdempotencyMcpAutoConfigurationTest {

    public record Hold(String holdId, String orderId, long cents) {
    }

    @McpTool
    public static class Payments {
        final AtomicInteger holds = new AtomicInteger();
        final AtomicInteger refunds = new AtomicInteger();

        public int holds() {
            return holds.get();
        }

        public int refunds() {
            return refunds.get();
        }

        @Idempotent(tier = Tier.READ_ONLY, operation = "lookup_order")
        public String lookup(String orderId) {
            return orderId + " DELIVERED";
        }

        @Idempotent(key = "'HOLD:' + #idempotencyKey", tier = Tier.REVERSIBLE, operation = "hold_funds")
        public Hold hold(String orderId, long cents, String idempotencyKey) {
            return new Hold("H-" + holds.incrementAndGet(), orderId, cents);
        }

        @Idempotent(key = "'REFUND:' + #idempotencyKey", tier = Tier.IRREVERSIBLE, operation = "refund")
        public String refund(String orderId, long cents, String idempotencyKey) {
            return "R-" + refunds.incrementAndGet();
        }
    }

    /** Not a tool: no @McpTool. */
    public static class Internal {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String touch(String id) {
            return id;
        }
    }

    @SpringBootApplication
    static class App {
        @Bean
        Payments payments() {
            return new Payments();
        }

        @Bean
        Internal internal() {
            return new Internal();
        }

        @Bean
        McpConfirmations confirmations(IdempotencyStore store) {
            return McpConfirmations.builder("a test secret of at least thirty-two bytes"
                    .getBytes(StandardCharsets.UTF_8), store).tokens(true).build();
        }

        /** Stands for the application's authentication (Spring Security sets the same request principal). */
        @Bean
        Filter bearerAuthentication() {
            return (request, response, chain) -> {
                String auth = ((HttpServletRequest) request).getHeader("Authorization");
                if (auth == null || !auth.startsWith("Bearer ")) {
                    chain.doFilter(request, response);
                    return;
                }
                Principal user = () -> auth.substring(7);
                chain.doFilter(new HttpServletRequestWrapper((HttpServletRequest) request) {
                    @Override
                    public Principal getUserPrincipal() {
                        return user;
                    }
                }, response);
            };
        }
    }

    // one application for the class (a Boot start costs seconds); each test uses keys of its own
    private static ConfigurableApplicationContext context;
    private static String url;
    private static final Map<String, McpSyncClient> clients = new HashMap<>();

    @BeforeAll
    static void start() {
        context = new SpringApplicationBuilder(App.class).web(WebApplicationType.SERVLET).run(
                "--server.port=0", "--spring.main.banner-mode=off", "--idempotency.mcp.enabled=true",
                "--idempotency.mcp.request-state-secret=the request state of every node, 32+ bytes",
                "--spring.datasource.url=jdbc:h2:mem:mcp-boot-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        url = "http://localhost:" + ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        clients.values().forEach(McpSyncClient::close);
        context.close();
    }

    /** The user's connection, made once: the SDK's HTTP client takes seconds to close. */
    private static McpSyncClient client(String user) {
        return clients.computeIfAbsent(user, u -> {
            HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(url)
                    .endpoint("/mcp").requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + u))
                    .build();
            McpSyncClient c = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
            c.initialize();
            return c;
        });
    }

    private static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        return client.callTool(new CallToolRequest(tool, arguments, null));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> structured(CallToolResult result) {
        return (Map<String, Object>) result.structuredContent();
    }

    @Test
    void theMcpToolBeansMethodsAreListedOverHttpWithTheirTiers() {
        Map<String, McpSchema.Tool> listed = new HashMap<>();
        client("alice").listTools().tools().forEach(t -> listed.put(t.name(), t));

        assertThat(listed).containsOnlyKeys("lookup_order", "hold_funds", "refund");
        assertThat(listed.get("lookup_order").annotations().readOnlyHint()).isTrue();
        assertThat(listed.get("lookup_order").annotations().openWorldHint()).as("@McpTool's default").isTrue();
        assertThat(listed.get("hold_funds").meta()).containsEntry(McpMeta.TIER, "REVERSIBLE");
        assertThat(listed.get("refund").meta()).containsEntry(McpMeta.TIER, "IRREVERSIBLE")
                .containsEntry(McpMeta.CONFIRMATION, "elicitation_or_token");
    }

    @Test
    void aDuplicateOverHttpReplaysAndTheKeyBelongsToTheAuthenticatedUser() {
        Payments payments = context.getBean(Payments.class);
        int before = payments.holds();
        McpSyncClient alice = client("alice");
        Map<String, Object> args = Map.of("orderId", "A-1", "cents", 4999, "idempotencyKey", "k-1");
        CallToolResult first = call(alice, "hold_funds", args);
        CallToolResult duplicate = call(alice, "hold_funds", args);
        CallToolResult bobs = call(client("bob"), "hold_funds", args);

        assertThat(structured(first)).containsEntry("orderId", "A-1");
        assertThat(duplicate.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(structured(duplicate)).isEqualTo(structured(first));
        assertThat(bobs.meta()).containsEntry(McpMeta.REPLAYED, false);
        assertThat(structured(bobs).get("holdId")).isNotEqualTo(structured(first).get("holdId"));
        assertThat(payments.holds()).isEqualTo(before + 2);
    }

    @Test
    void anIrreversibleToolOverHttpRunsOnceAnApproverSaidYesAndTheTokenComesBack() {
        Payments payments = context.getBean(Payments.class);
        int before = payments.refunds();
        McpSyncClient alice = client("alice");
        Map<String, Object> args = new HashMap<>(Map.of("orderId", "A-1", "cents", 4999, "idempotencyKey", "r-1"));
        CallToolResult asked = call(alice, "refund", args);
        assertThat(structured(asked)).containsEntry("error", "confirmation_required");
        args.put("confirmationToken", structured(asked).get("confirmationToken"));
        assertThat(structured(call(alice, "refund", args))).containsEntry("error", "approval_pending");
        McpConfirmations confirmations = context.getBean(McpConfirmations.class);
        confirmations.approve("alice", "refund", "REFUND:r-1",
                confirmations.pending("alice", "refund", "REFUND:r-1").orElseThrow().argumentDigest(),
                new ResolvedBy("olga", "the customer confirmed by phone"));
        CallToolResult ran = call(alice, "refund", args);

        assertThat(ran.isError()).as("%s", ran).isFalse();
        assertThat(payments.refunds()).isEqualTo(before + 1);
    }

    /** A 2026-07-28 client of the user on the same endpoint: stateless, no initialize, no session. */
    private static io.modelcontextprotocol.modern.client.McpSyncClient modernClient(String user) {
        return io.modelcontextprotocol.modern.client.McpClient.sync(HttpClientMcpTransport.builder(url + "/mcp")
                        .requestCustomizer(McpHttpRequestCustomizer.fromSync(
                                (request, headers, ctx) -> headers.set("Authorization", "Bearer " + user)))
                        .build())
                .formElicitation(request -> io.modelcontextprotocol.modern.McpSchema.ElicitResult.cancel())
                .build();
    }

    @Test
    void aModernClientOnTheSameEndpointSharesTheUsersKeysAcrossBothEras() {
        Payments payments = context.getBean(Payments.class);
        int before = payments.holds();
        var modern = modernClient("carol");
        Map<String, Object> args = Map.of("orderId", "A-9", "cents", 4999, "idempotencyKey", "k-eras");

        assertThat(modern.tools().list().tools()).extracting(io.modelcontextprotocol.modern.McpSchema.Tool::name)
                .containsExactlyInAnyOrder("lookup_order", "hold_funds", "refund");
        CallToolResult legacy = call(client("carol"), "hold_funds", args);
        var retried = modern.tool("hold_funds").arguments(args).call();

        // the first attempt came on 2025-11-25, its retry on 2026-07-28: one hold, the retry replays it
        assertThat(retried.isError()).isFalse();
        assertThat(retried.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(retried.structuredContent()).isEqualTo(legacy.structuredContent());
        assertThat(payments.holds()).isEqualTo(before + 1);
    }

    @Test
    void aModernIrreversibleCallRunsOnceItsUserSaidYes() {
        Payments payments = context.getBean(Payments.class);
        int before = payments.refunds();
        Map<String, Object> args = Map.of("orderId", "A-9", "cents", 4999, "idempotencyKey", "r-modern");

        var asked = modernClient("carol").tool("refund").arguments(args).callOnce();
        var ran = modernClient("carol").tool("refund").arguments(args)
                .formElicitation(request -> io.modelcontextprotocol.modern.McpSchema.ElicitResult
                        .accept(Map.of("confirm", true)))
                .call();

        assertThat(asked).isInstanceOf(io.modelcontextprotocol.modern.McpSchema.InputRequiredResult.class);
        assertThat(ran.isError()).as("%s", ran).isFalse();
        assertThat(payments.refunds()).isEqualTo(before + 1);
        assertThat(context.getBean(McpConfirmations.class).answers("carol", "refund", "REFUND:r-modern"))
                .singleElement().satisfies(a -> assertThat(a.confirmed()).isTrue());
    }

    @Test
    void withoutThePropertyNothingIsServed() {
        try (ConfigurableApplicationContext off = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.SERVLET).run("--server.port=0", "--spring.main.banner-mode=off",
                        "--spring.datasource.url=jdbc:h2:mem:mcp-boot-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")) {
            assertThat(off.getBeanNamesForType(io.modelcontextprotocol.server.McpSyncServer.class)).isEmpty();
            assertThat(off.containsBean("idempotencyMcpServlet")).isFalse();
        }
    }
}
