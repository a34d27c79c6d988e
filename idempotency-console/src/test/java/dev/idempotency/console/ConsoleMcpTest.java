package dev.idempotency.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.mcp.McpTool;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * An MCP tool call held for review, seen in the console: a real application with {@code idempotency-mcp} (the SDK's
 * streamable HTTP transport, its client answering the confirmation by elicitation), the call's key held after the
 * user confirmed it and the gateway timed out. The key's page, reached from the list without the call's scope,
 * shows who confirmed what and links to that principal's scope, where the record and its attempts are.
 */
class ConsoleMcpTest {

    @McpTool
    public static class Refunds {
        private final AtomicBoolean failNext = new AtomicBoolean();

        /** The next refund fails as a gateway timeout would (a method: the bean is a proxy). */
        public void failNext() {
            failNext.set(true);
        }

        @Idempotent(key = "'REFUND:' + #idempotencyKey", tier = Tier.IRREVERSIBLE, operation = "refund_order")
        public String refund(String orderId, long cents, String idempotencyKey) {
            if (failNext.getAndSet(false)) {
                throw new IllegalStateException("the refund gateway timed out");
            }
            return "refunded " + orderId;
        }
    }

    /** The application: the tool, the confirmation gate, and a bearer token standing for its authentication. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Refunds refunds() {
            return new Refunds();
        }

        @Bean
        McpConfirmations confirmations(IdempotencyStore store) {
            return McpConfirmations.builder("a console test secret of at least thirty-two bytes"
                    .getBytes(StandardCharsets.UTF_8), store).build();
        }

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

    @Test
    void aHeldMcpCallShowsWhoConfirmedItAndLeadsToItsRecordAndAttempts() throws Exception {
        SpringApplication application = new SpringApplication(App.class);
        try (ConfigurableApplicationContext app = application.run("--server.port=0",
                "--spring.main.banner-mode=off", "--idempotency.console.enabled=true",
                "--idempotency.mcp.enabled=true",
                // the SDK's JSON-schema validator warns of the MCP keyword x-mcp-header, which it need not know
                "--logging.level.com.networknt.schema=ERROR",
                "--spring.datasource.url=jdbc:h2:mem:console-mcp-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                // the bearer filter above is this application's authentication, not Spring Security's
                "--spring.autoconfigure.exclude="
                        + "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
                        + "org.springframework.boot.security.autoconfigure.web.servlet"
                        + ".ServletWebSecurityAutoConfiguration")) {
            String base = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
            app.getBean(Refunds.class).failNext();
            McpSyncClient dana = McpClient.sync(HttpClientStreamableHttpTransport.builder(base).endpoint("/mcp")
                            .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer dana")).build())
                    .requestTimeout(Duration.ofSeconds(30))
                    .capabilities(McpSchema.ClientCapabilities.builder().elicitation().build())
                    .elicitation(request -> new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.ACCEPT,
                            Map.of("confirm", true)))
                    .build();
            try {
                dana.initialize();
                McpSchema.CallToolResult failed = dana.callTool(new McpSchema.CallToolRequest("refund_order",
                        Map.of("orderId", "O-7", "cents", 1250, "idempotencyKey", "rf-7"), null));
                assertThat(failed.isError()).as("%s", failed).isTrue();
            } finally {
                dana.closeGracefully();
            }
            IdempotencyAdmin admin = app.getBean(IdempotencyAdmin.class);
            assertThat(admin.needsReview(10)).singleElement().extracting(IdempotencyAdmin.Entry::key)
                    .isEqualTo("REFUND:rf-7");

            // from the list: no scope, so no record, but the answers, and the way to the record
            String unscoped = page(base, "/idempotency/key?operation=refund_order&key=REFUND:rf-7");
            assertThat(unscoped).contains("no record").contains("<table id=\"answers\">")
                    .contains("<td>dana</td><td>accept: confirmed, the call ran</td><td>refund_order</td>")
                    .contains("O-7").contains("&amp;scope=mcp%3Adana\">mcp:dana</a>");

            String scoped = page(base, "/idempotency/key?operation=refund_order&key=REFUND:rf-7&scope="
                    + URLEncoder.encode("mcp:dana", StandardCharsets.UTF_8));
            assertThat(scoped).contains("<td id=\"status\">" + Status.NEEDS_REVIEW + "</td>")
                    .contains("<table id=\"answers\">").doesNotContain("answer-scopes")
                    .contains("held for review").contains("the refund gateway timed out");
            assertThat(List.of(scoped.indexOf("<h2>Attempts</h2>"), scoped.indexOf("<h2>Confirmation answers"),
                    scoped.indexOf("<h2>Resolve</h2>"), scoped.indexOf("<h2>History</h2>"))).isSorted()
                    .doesNotContain(-1);
        }
    }

    private static String page(String base, String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Authorization", "Bearer olga").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return response.body();
    }
}
