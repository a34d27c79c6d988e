package dev.idempotency.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The console over HTTP on H2, behind Spring Security: off unless turned on, nothing for an anonymous or
 * unentitled user, keys escaped, and a resolution only from its own page, with a reason, as the signed-in user.
 */
class ConsoleTest {

    private static final String HELD = "P-<script>alert(1)</script>";
    private static ConfigurableApplicationContext app;
    private static String base;

    @BeforeAll
    static void start() {
        app = ConsoleTestApplication.start("idempotency.console.enabled=true", "idempotency.console.roles=OPS",
                "spring.datasource.url=jdbc:h2:mem:console-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        base = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    /** A client with its own session (cookies), signed in as {@code user} with HTTP Basic, or anonymous. */
    private record Client(HttpClient http, String user) {

        static Client as(String user) {
            return new Client(HttpClient.newBuilder().cookieHandler(new CookieManager()).build(), user);
        }

        HttpResponse<String> get(String path) throws IOException, InterruptedException {
            return http.send(auth(HttpRequest.newBuilder(URI.create(base + path))).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        }

        HttpResponse<String> post(String path, Map<String, String> form, String origin)
                throws IOException, InterruptedException {
            String body = form.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                    + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
            HttpRequest.Builder request = auth(HttpRequest.newBuilder(URI.create(base + path)))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(body));
            if (origin != null) {
                request.header("Origin", origin);
            }
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }

        private HttpRequest.Builder auth(HttpRequest.Builder request) {
            return user == null ? request : request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + ConsoleTestApplication.PASSWORD).getBytes(StandardCharsets.UTF_8)));
        }
    }

    private static void hold(String key) {
        ConsoleTestApplication.Payouts payouts = app.getBean(ConsoleTestApplication.Payouts.class);
        payouts.failNext();
        assertThatThrownBy(() -> payouts.send(key)).isInstanceOf(IllegalStateException.class);
        assertThat(status(key)).isEqualTo(Status.NEEDS_REVIEW);
    }

    private static Status status(String key) {
        return app.getBean(IdempotencyAdmin.class).find("Payouts.send", key).map(IdempotencyAdmin.Entry::status)
                .orElse(null);
    }

    private static String keyPath(String key) {
        return "/idempotency/key?operation=Payouts.send&key=" + URLEncoder.encode(key, StandardCharsets.UTF_8);
    }

    /** The key page's CSRF token field (Spring Security's), from the "not executed" form. */
    private static Map<String, String> form(String page, String key, String outcome, String reason) {
        Matcher csrf = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"").matcher(page);
        assertThat(csrf.find()).as("the form carries Spring Security's CSRF token").isTrue();
        Map<String, String> form = new LinkedHashMap<>();
        form.put("_csrf", csrf.group(1));
        form.put("operation", "Payouts.send");
        form.put("key", key);
        form.put("outcome", outcome);
        form.put("reason", reason);
        return form;
    }

    @Test
    void anAnonymousUserSeesNothing() throws Exception {
        hold("P-anon");
        for (String path : new String[] {"/idempotency/", keyPath("P-anon"), "/idempotency/duplicates"}) {
            HttpResponse<String> page = Client.as(null).get(path);
            assertThat(page.statusCode()).as(path).isIn(401, 302);
            assertThat(page.body()).doesNotContain("P-anon").doesNotContain("Payouts.send");
        }
        HttpResponse<String> post = Client.as(null).post("/idempotency/resolve", Map.of("operation", "Payouts.send",
                "key", "P-anon", "outcome", "not-executed", "reason", "r"), base);
        assertThat(post.statusCode()).isIn(401, 302, 403);
        assertThat(status("P-anon")).isEqualTo(Status.NEEDS_REVIEW);
    }

    @Test
    void aUserWithoutTheConsoleRoleIsRefused() throws Exception {
        HttpResponse<String> page = Client.as("bob").get("/idempotency/");
        assertThat(page.statusCode()).isEqualTo(403);
        assertThat(page.body()).contains("bob has none of the roles");
    }

    @Test
    void heldKeysAreListedWithTheirTextEscaped() throws Exception {
        hold(HELD);
        HttpResponse<String> page = Client.as("alice").get("/idempotency/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Cache-Control")).hasValueSatisfying(v -> assertThat(v)
                .contains("no-store"));
        assertThat(page.body()).contains("P-&lt;script&gt;alert(1)&lt;/script&gt;").doesNotContain("<script>");
        HttpResponse<String> key = Client.as("alice").get(keyPath(HELD));
        assertThat(key.body()).contains("NEEDS_REVIEW").contains("id=\"not-executed\"")
                .contains("dev.idempotency.console.ConsoleTestApplication$Payouts.send(java.lang.String)")
                .contains("<code id=\"digest\">" + app.getBean(IdempotencyAdmin.class).find("Payouts.send", HELD)
                        .orElseThrow().argumentsDigest() + "</code>")
                .doesNotContain("<script>");
    }

    @Test
    void theKeyPageShowsTheClaimAndTheAttemptsThatMetItOldestFirst() throws Exception {
        hold("P-attempts");
        ConsoleTestApplication.Payouts payouts = app.getBean(ConsoleTestApplication.Payouts.class);
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> payouts.send("P-attempts"))
                    .isInstanceOf(dev.idempotency.IdempotencyOutcomeUnknownException.class);
        }

        String page = Client.as("alice").get(keyPath("P-attempts")).body();
        Matcher table = Pattern.compile("<table id=\"attempts\">(.*?)</table>").matcher(page);
        assertThat(table.find()).as(page).isTrue();
        Matcher what = Pattern.compile("<tr><td class=\"t\">[^<]+</td><td>([^<]+)</td><td>([^<]+)</td>"
                + "<td>([^<]*)</td></tr>").matcher(table.group(1));
        java.util.List<String> rows = new java.util.ArrayList<>();
        while (what.find()) {
            rows.add(what.group(1) + " | " + what.group(2) + " | " + what.group(3));
        }
        assertThat(rows).containsExactly(
                "claimed the key | - | the record&#39;s claim, with the arguments&#39; digest above",
                "held for review | IN_FLIGHT | it ended with java.lang.IllegalStateException: the payout gateway"
                        + " timed out",
                "refused: outcome unknown, held for review | NEEDS_REVIEW | ",
                "refused: outcome unknown, held for review | NEEDS_REVIEW | ");
        assertThat(page).as("the application has idempotency-mcp on its class path but no McpConfirmations bean")
                .doesNotContain("Confirmation answers");
        assertThat(app.getBean(IdempotencyAdmin.class).history("Payouts.send", "P-attempts"))
                .as("attempts are not resolutions").isEmpty();
    }

    @Test
    void aResolutionNeedsItsOwnOriginTheCsrfTokenAndAReason() throws Exception {
        hold("P-guarded");
        Client alice = Client.as("alice");
        String page = alice.get(keyPath("P-guarded")).body();

        Map<String, String> noReason = form(page, "P-guarded", "not-executed", " ");
        assertThat(alice.post("/idempotency/resolve", noReason, base).statusCode()).isEqualTo(400);
        Map<String, String> valid = form(page, "P-guarded", "not-executed", "the gateway shows no payout");
        assertThat(alice.post("/idempotency/resolve", valid, "https://evil.example").statusCode()).isEqualTo(403);
        assertThat(alice.post("/idempotency/resolve", valid, null).statusCode()).isEqualTo(403);
        Map<String, String> noToken = new LinkedHashMap<>(valid);
        noToken.remove("_csrf");
        // Spring Security's CsrfFilter refuses it (403, or 401 once its error dispatch meets the login)
        assertThat(alice.post("/idempotency/resolve", noToken, base).statusCode()).isIn(401, 403);
        assertThat(status("P-guarded")).isEqualTo(Status.NEEDS_REVIEW);

        HttpResponse<String> done = alice.post("/idempotency/resolve", valid, base);
        assertThat(done.statusCode()).isEqualTo(303);
        assertThat(status("P-guarded")).isNull();
        assertThat(app.getBean(IdempotencyAdmin.class).history("Payouts.send", "P-guarded")).singleElement()
                .satisfies(e -> {
                    assertThat(e.by().actor()).isEqualTo("alice");
                    assertThat(e.by().reason()).isEqualTo("the gateway shows no payout");
                    assertThat(e.action()).isEqualTo(IdempotencyAudit.Action.RELEASED);
                });
        assertThat(alice.get(done.headers().firstValue("Location").orElseThrow().replaceFirst("^https?://[^/]+", ""))
                .body()).contains("Resolved as not executed by alice").contains("the gateway shows no payout")
                .contains("no record").contains("<form id=\"scope\" method=\"get\"");
    }

    @Test
    void executedRecordsTheResultTheRetryReplays() throws Exception {
        hold("P-executed");
        Client alice = Client.as("alice");
        Map<String, String> form = form(alice.get(keyPath("P-executed")).body(), "P-executed", "executed",
                "the gateway statement lists it");
        form.put("result", "\"payout P-executed #gateway\"");
        assertThat(alice.post("/idempotency/resolve", form, base).statusCode()).isEqualTo(303);

        assertThat(app.getBean(ConsoleTestApplication.Payouts.class).send("P-executed"))
                .isEqualTo("payout P-executed #gateway");
    }

    @Test
    void theConsoleIsOffUnlessTurnedOn() throws Exception {
        try (ConfigurableApplicationContext off = ConsoleTestApplication.start(
                "spring.datasource.url=jdbc:h2:mem:console-off-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")) {
            int port = ((WebServerApplicationContext) off).getWebServer().getPort();
            HttpResponse<String> page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://localhost:" + port + "/idempotency/")).header("Authorization", "Basic "
                    + Base64.getEncoder().encodeToString(("alice:" + ConsoleTestApplication.PASSWORD)
                            .getBytes(StandardCharsets.UTF_8))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(page.statusCode()).isEqualTo(404);
            assertThat(off.getBeansOfType(ConsoleController.class)).isEmpty();
        }
    }
}
