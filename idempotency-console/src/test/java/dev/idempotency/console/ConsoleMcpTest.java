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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

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
        private final AtomicInteger runs = new AtomicInteger();

        /** How many refunds ran (a method: the bean is a proxy). */
        public int runs() {
            return runs.get();
        }

        /** The next refund fails as a gateway timeout would (a method: the bean is a proxy). */
        public void failNext() {
            failNext.set(true);
        }

        @Idempotent(key = "'REFUND:' + #idempotencyKey", tier = Tier.IRREVERSIBLE, operation = "refund_order")
        public String refund(String orderId, long cents, String idempotencyKey) {
            if (failNext.getAndSet(false)) {
                throw new IllegalStateException("the refund gateway timed out");
            }
            runs.incrementAndGet();
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
        McpConfirmations confirmations(IdempotencyStore store, Environment environment) {
            return McpConfirmations.builder("a console test secret of at least thirty-two bytes"
                    .getBytes(StandardCharsets.UTF_8), store)
                    .tokens(environment.getProperty("test.tokens", Boolean.class, false)).build();
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
    void aLegacyClientsCallWaitsForAnApproverOnTheConsoleAndItsTokenThenRunsItOnce() throws Exception {
        try (ConfigurableApplicationContext app = start("--test.tokens=true")) {
            String base = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
            Refunds refunds = app.getBean(Refunds.class);
            // a 2025-11-25 client without elicitation: the call gets a token, and waits
            McpSyncClient dana = McpClient.sync(HttpClientStreamableHttpTransport.builder(base).endpoint("/mcp")
                            .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer dana")).build())
                    .requestTimeout(Duration.ofSeconds(30)).build();
            try {
                dana.initialize();
                Map<String, Object> arguments = Map.of("orderId", "O-8", "cents", 990, "idempotencyKey", "ap-8");
                McpSchema.CallToolResult asked = dana.callTool(new McpSchema.CallToolRequest("refund_order",
                        arguments, null));
                assertThat(structured(asked)).as("%s", asked).containsEntry("error", "confirmation_required");
                Map<String, Object> withToken = new LinkedHashMap<>(arguments);
                withToken.put("confirmationToken", structured(asked).get("confirmationToken"));
                String digest = app.getBean(McpConfirmations.class).pending("dana", "refund_order", "REFUND:ap-8")
                        .orElseThrow().argumentDigest();

                String overview = page(base, "/idempotency");
                assertThat(overview).contains("<h2>MCP calls waiting for an approver</h2>")
                        .contains("<table id=\"approvals\">")
                        .contains("<td>refund_order</td><td>dana</td><td>refund_order</td><td>REFUND:ap-8</td>")
                        .contains("O-8").contains("990").contains("<code>" + digest + "</code>")
                        .contains("<input type=\"hidden\" name=\"digest\" value=\"" + digest + "\">")
                        .contains("<textarea name=\"reason\" rows=\"2\" required");
                assertThat(structured(dana.callTool(new McpSchema.CallToolRequest("refund_order", withToken, null))))
                        .as("the token alone").containsEntry("error", "approval_pending");

                Map<String, String> form = Map.of("principal", "dana", "operation", "refund_order",
                        "key", "REFUND:ap-8", "digest", digest, "reason", "the customer confirmed by phone");
                HttpResponse<String> own = post(base, "dana", base, form);
                assertThat(own.statusCode()).isEqualTo(403);
                assertThat(own.body()).contains("Not approved: approve(refund_order, &#39;REFUND:ap-8&#39;): the"
                        + " approver &#39;dana&#39; is the MCP principal that made the call");
                assertThat(post(base, "olga", null, form).statusCode()).as("no Origin").isEqualTo(403);
                HttpResponse<String> noReason = post(base, "olga", base, Map.of("principal", "dana",
                        "operation", "refund_order", "key", "REFUND:ap-8", "digest", digest, "reason", " "));
                assertThat(noReason.statusCode()).isEqualTo(400);
                assertThat(noReason.body()).contains("Not approved:").contains("needs a reason");
                HttpResponse<String> stale = post(base, "olga", base, Map.of("principal", "dana",
                        "operation", "refund_order", "key", "REFUND:ap-8", "digest", "0".repeat(64),
                        "reason", "checked"));
                assertThat(stale.statusCode()).as("other arguments").isEqualTo(409);
                assertThat(refunds.runs()).isZero();

                HttpResponse<String> approved = post(base, "olga", base, form);
                assertThat(approved.statusCode()).as(approved.body()).isEqualTo(303);
                String location = approved.headers().firstValue("Location").orElseThrow();
                assertThat(location).isEqualTo("/idempotency/?approved=REFUND%3Aap-8");
                assertThat(page(base, location)).contains("id=\"approved\">Approved the call with key"
                        + " 'REFUND:ap-8'").contains("approved by olga: runs when its client sends it again")
                        .doesNotContain("<form class=\"approve\"");

                McpSchema.CallToolResult ran = dana.callTool(new McpSchema.CallToolRequest("refund_order",
                        withToken, null));
                assertThat(ran.isError()).as("%s", ran).isFalse();
                McpSchema.CallToolResult again = dana.callTool(new McpSchema.CallToolRequest("refund_order",
                        withToken, null));
                assertThat(again.isError()).as("a retry replays: %s", again).isFalse();
                assertThat(refunds.runs()).as("the approved call ran once").isEqualTo(1);
            } finally {
                dana.closeGracefully();
            }
            assertThat(page(base, "/idempotency")).contains("<p id=\"approvals-empty\">None.</p>");
            assertThat(page(base, "/idempotency/key?operation=refund_order&key=REFUND:ap-8")).contains(
                    "<td>dana</td><td>approve by olga (the customer confirmed by phone): the call's token runs it"
                            + " once</td>");
        }
    }

    @Test
    void withoutTokensTheConsoleHasNoApprovals() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            String base = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
            assertThat(page(base, "/idempotency")).doesNotContain("approver").doesNotContain("approvals");
            HttpResponse<String> refused = post(base, "olga", base, Map.of("principal", "dana", "operation",
                    "refund_order", "key", "REFUND:x", "digest", "0".repeat(64), "reason", "checked"));
            assertThat(refused.statusCode()).isEqualTo(404);
        }
    }

    private static ConfigurableApplicationContext start(String... more) {
        List<String> args = new ArrayList<>(List.of("--server.port=0",
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
                        + ".ServletWebSecurityAutoConfiguration"));
        args.addAll(List.of(more));
        return new SpringApplication(App.class).run(args.toArray(String[]::new));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> structured(McpSchema.CallToolResult result) {
        return (Map<String, Object>) result.structuredContent();
    }

    /** Posts the approval form as {@code user}, from {@code origin} (null: no Origin header). */
    private static HttpResponse<String> post(String base, String user, @Nullable String origin,
            Map<String, String> form) throws Exception {
        String body = form.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/idempotency/approve"))
                .header("Authorization", "Bearer " + user).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (origin != null) {
            request.header("Origin", origin);
        }
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aHeldMcpCallShowsWhoConfirmedItAndLeadsToItsRecordAndAttempts() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
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
