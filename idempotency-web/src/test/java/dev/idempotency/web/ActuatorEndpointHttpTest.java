package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.IdempotencyStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The idempotency actuator endpoint as an operator exposes it over the web in an application without Spring
 * Security: an anonymous caller can neither release a key held for review (the next retry would run an irreversible
 * call again) nor read the keys; an authenticated operator resolves one, and the audit table says who and why.
 */
class ActuatorEndpointHttpTest {

    private static final String EXPOSED = "management.endpoints.web.exposure.include=idempotency";
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** An irreversible payout whose attempt died: held for review. */
    private static void heldForReview(OrderServer server, String key) {
        IdempotencyStore store = server.context.getBean(IdempotencyStore.class);
        byte[] hash = Keys.hash("Payouts.send", "", key);
        Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        ClaimRequest claim = new ClaimRequest(hash, "Payouts.send", key, Keys.hash("args", "", key),
                Tier.IRREVERSIBLE, now, now.plusSeconds(30), now.plus(Duration.ofDays(1)), Duration.ofSeconds(1));
        store.claim(claim);
        store.markNeedsReview(hash, claim.leaseUntil());
    }

    private static Status status(OrderServer server, String key) {
        return server.context.getBean(IdempotencyAdmin.class).find("Payouts.send", key).orElseThrow().status();
    }

    private HttpResponse<String> resolve(OrderServer server, String key, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.base + "/actuator/idempotency"))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"operation\": \"Payouts.send\", \"key\": \"" + key
                        + "\", \"outcome\": \"not-executed\", \"reason\": \"gateway shows no payout\"}"));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> report(OrderServer server, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.base + "/actuator/idempotency"))
                .timeout(Duration.ofSeconds(20)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void exposedWithItsDefaultsAnAnonymousPostReleasesNothingAndAGetShowsNoKey() throws Exception {
        try (OrderServer server = OrderServer.onH2(EXPOSED)) {
            heldForReview(server, "PAYOUT-1");

            HttpResponse<String> post = resolve(server, "PAYOUT-1");

            assertThat(post.statusCode()).as(post.body()).isBetween(400, 499);
            assertThat(status(server, "PAYOUT-1")).isEqualTo(Status.NEEDS_REVIEW);
            HttpResponse<String> get = report(server);
            assertThat(get.statusCode()).isEqualTo(200);
            assertThat(get.body()).contains("\"needsReview\"").contains("******").doesNotContain("PAYOUT-1");
        }
    }

    @Test
    void withWriteAccessOnlyAnAuthenticatedOperatorResolvesAndTheAuditSaysWho() throws Exception {
        try (OrderServer server = OrderServer.onH2(EXPOSED, "management.endpoint.idempotency.access=unrestricted")) {
            heldForReview(server, "PAYOUT-2");

            HttpResponse<String> anonymous = resolve(server, "PAYOUT-2");
            assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(403);
            assertThat(anonymous.body()).contains("authenticated operator");
            assertThat(status(server, "PAYOUT-2")).isEqualTo(Status.NEEDS_REVIEW);

            HttpResponse<String> operator = resolve(server, "PAYOUT-2", "X-User", "ops-alice");
            assertThat(operator.statusCode()).as(operator.body()).isEqualTo(200);
            IdempotencyAdmin admin = server.context.getBean(IdempotencyAdmin.class);
            assertThat(admin.find("Payouts.send", "PAYOUT-2")).isEmpty();
            assertThat(admin.history("Payouts.send", "PAYOUT-2")).singleElement().satisfies(e -> {
                assertThat(e.by().actor()).isEqualTo("ops-alice");
                assertThat(e.by().reason()).isEqualTo("gateway shows no payout");
                assertThat(e.action()).isEqualTo(IdempotencyAudit.Action.RELEASED);
            });
            Integer rows = server.context.getBean(JdbcTemplate.class).queryForObject("select count(*) from "
                    + server.table + "_audit where actor = 'ops-alice'", Integer.class);
            assertThat(rows).as("the audit is the table beside the store's, not memory").isEqualTo(1);
            assertThat(report(server, "X-User", "ops-alice").body()).contains("\"actor\":\"ops-alice\"")
                    .contains("PAYOUT-2");
        }
    }
}
