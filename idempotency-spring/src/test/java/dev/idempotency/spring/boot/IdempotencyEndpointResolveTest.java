package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyReport;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.InMemoryIdempotencyAudit;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * The actuator endpoint shows what waits for an operator as stored, and its write operation resolves a key held for
 * review: as not executed (the next call runs) or as executed with a result (every later call replays it).
 */
class IdempotencyEndpointResolveTest {

    static final SecurityContext OPERATOR = as("ops-alice");
    static final SecurityContext ANONYMOUS = SecurityContext.NONE;
    private static final String WHY = "checked the gateway";

    /** An authenticated principal of that name, in {@code roles}. */
    static SecurityContext as(String name, String... roles) {
        return new SecurityContext() {
            @Override
            public Principal getPrincipal() {
                return () -> name;
            }

            @Override
            public boolean isUserInRole(String role) {
                return List.of(roles).contains(role);
            }
        };
    }

    private static final String INVENTORY = """
            {"format": 1, "operations": [
              {"operation": "Payouts.send", "class": "com.example.Payouts", "method": "send",
               "parameterTypes": ["java.lang.String"], "returnType": "java.lang.String", "tier": "IRREVERSIBLE",
               "key": "#id", "ttl": "7d", "compensate": null, "lockTimeout": "10s"},
              {"operation": "Payouts.batch", "class": "com.example.Payouts", "method": "batch",
               "parameterTypes": ["java.lang.String"], "returnType": "java.util.List<java.lang.String>",
               "tier": "IRREVERSIBLE", "key": "#id", "ttl": "7d", "compensate": null, "lockTimeout": "10s"}]}
            """;

    private final Instant start = Instant.parse("2026-01-01T10:00:00Z");
    private final Clock later = Clock.fixed(start.plus(Duration.ofHours(2)), ZoneOffset.UTC);
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final InMemoryIdempotencyAudit audit = new InMemoryIdempotencyAudit();
    private final IdempotentOperation<String> send = IdempotentOperation
            .builder("Payouts.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();

    /** An irreversible call of {@code send} that threw: its outcome is unknown, the key is held for review. */
    private void sendFailed(String key) {
        IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(Clock.fixed(start, ZoneOffset.UTC))
                .attempts(audit).build();
        try {
            executor.execute(send, key, new Object[] {key}, () -> {
                throw new IllegalStateException("the payout gateway timed out");
            });
        } catch (RuntimeException expected) {
            // held for review
        }
        assertThat(store.find(Keys.hash("Payouts.send", "", key)).orElseThrow().status())
                .isEqualTo(Status.NEEDS_REVIEW);
    }

    private void heldForReview(String operation, String key) {
        byte[] hash = Keys.hash(operation, "", key);
        ClaimRequest claim = new ClaimRequest(hash, operation, key, Keys.hash("args", "", key), Tier.IRREVERSIBLE,
                start, start.plusSeconds(30), start.plusSeconds(60), Duration.ofSeconds(1));
        store.claim(claim);
        store.markNeedsReview(hash, claim.leaseUntil());
    }

    private IdempotencyReportEndpoint endpoint(Path dir) throws IOException {
        return endpoint(dir, IdempotencyReportEndpoint.Guard.DEFAULTS);
    }

    private IdempotencyReportEndpoint endpoint(Path dir, IdempotencyReportEndpoint.Guard guard) throws IOException {
        Path file = dir.resolve(IdempotencyAdmin.OPERATIONS_RESOURCE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, INVENTORY);
        IdempotencyAdmin admin = IdempotencyAdmin.builder(store).clock(later).audit(audit)
                .classLoader(new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)).build();
        return new IdempotencyReportEndpoint(admin::operations, new IdempotencyReport.Counts(), () -> false,
                () -> admin, later, JacksonResultCodec.defaultMapper(), guard);
    }

    @Test
    @SuppressWarnings("unchecked")
    void theReportShowsTheBacklogAndTheKeysWaiting(@TempDir Path dir) throws IOException {
        heldForReview("Payouts.send", "P-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        Map<String, Object> json = endpoint.report(OPERATOR);
        List<Map<String, Object>> backlog = (List<Map<String, Object>>) json.get("backlog");
        assertThat(backlog).singleElement().satisfies(b -> {
            assertThat(b).containsEntry("operation", "Payouts.send").containsEntry("needsReview", 1)
                    .containsEntry("oldestNeedsReviewAgeSeconds", 7200);
        });
        assertThat((List<Map<String, Object>>) json.get("needsReview")).singleElement()
                .satisfies(e -> assertThat(e).containsEntry("key", "P-1").containsEntry("status", "NEEDS_REVIEW")
                        .containsEntry("argumentsDigest", java.util.HexFormat.of().formatHex(
                                Keys.hash("args", "", "P-1")))
                        .doesNotContainKey("result"));
        assertThat(endpoint.format(OPERATOR, "markdown")).contains("| Payouts.send | 1 | 2h0m | 0 | - |");
    }

    @Test
    @SuppressWarnings("unchecked")
    void eachKeyWaitingShowsItsRecordedAttemptsMaskedLikeItsKey(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        sendFailed("P-1");  // the retry is refused: held for review
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        Map<String, Object> held = ((List<Map<String, Object>>) endpoint.report(OPERATOR).get("needsReview")).get(0);
        assertThat(held).containsEntry("key", "P-1");
        assertThat((List<Map<String, Object>>) held.get("attempts")).extracting(a -> a.get("kind"), a -> a.get("met"))
                .containsExactly(tuple("HELD_FOR_REVIEW", "IN_FLIGHT"), tuple("REFUSED_HELD", "NEEDS_REVIEW"));
        assertThat((List<Map<String, Object>>) held.get("attempts")).first().satisfies(a -> assertThat(a)
                .containsEntry("at", start.toString())
                .hasEntrySatisfying("detail", d -> assertThat(d.toString()).contains("the payout gateway timed out")));

        Map<String, Object> masked = ((List<Map<String, Object>>) endpoint.report(ANONYMOUS).get("needsReview"))
                .get(0);
        assertThat(masked.toString()).doesNotContain("P-1").doesNotContain("timed out");
        assertThat((List<Map<String, Object>>) masked.get("attempts")).hasSize(2)
                .allSatisfy(a -> assertThat(a).containsEntry("detail", "******"));
    }

    @Test
    void notExecutedReleasesTheKeyAndTheNextCallRuns(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        WebEndpointResponse<Map<String, Object>> answer = endpoint.resolve(OPERATOR, "Payouts.send", "P-1", null,
                "not-executed", null, WHY);

        assertThat(answer.getStatus()).isEqualTo(200);
        assertThat(answer.getBody()).containsEntry("resolved", true);
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-1"))).isEmpty();
        assertThat(IdempotentExecutor.builder(store).clock(later).build()
                .execute(send, "P-1", new Object[] {"P-1"}, () -> "sent again")).isEqualTo("sent again");
    }

    @Test
    void executedRecordsTheResultThatEveryLaterCallReplays(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        WebEndpointResponse<Map<String, Object>> answer = endpoint.resolve(OPERATOR, "Payouts.send", "P-1", "",
                "executed", "\"receipt-9\"", WHY);

        assertThat(answer.getStatus()).isEqualTo(200);
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-1")).orElseThrow().status())
                .isEqualTo(Status.COMPLETED);
        // the operator recorded the outcome: a retry with the original arguments replays it
        assertThat(IdempotentExecutor.builder(store).clock(later).build()
                .execute(send, "P-1", new Object[] {"P-1"}, () -> "never")).isEqualTo("receipt-9");
    }

    @Test
    void whatCannotBeResolvedIsAnsweredWithItsStatusAndNothingChanges(@TempDir Path dir) throws IOException {
        heldForReview("Payouts.batch", "B-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        assertThat(endpoint.resolve(OPERATOR, "Payouts.send", "nobody", null, "not-executed", null, WHY)
                .getStatus()).isEqualTo(404);
        assertThat(endpoint.resolve(OPERATOR, "Payouts.batch", "B-1", null, "maybe", null, WHY).getStatus())
                .isEqualTo(400);
        WebEndpointResponse<Map<String, Object>> generic = endpoint.resolve(OPERATOR, "Payouts.batch", "B-1", null,
                "executed", "[\"a\"]", WHY);
        assertThat(generic.getStatus()).isEqualTo(400);
        assertThat(generic.getBody().get("problem").toString()).contains("generic");
        assertThat(endpoint.resolve(OPERATOR, "Unknown.op", "B-1", null, "executed", "1", WHY).getStatus())
                .isEqualTo(400);
        sendFailed("P-3");
        WebEndpointResponse<Map<String, Object>> forgotten = endpoint.resolve(OPERATOR, "Payouts.send", "P-3", null,
                "executed", null, WHY);
        assertThat(forgotten.getStatus()).as("no result for a method that returns one").isEqualTo(400);
        assertThat(forgotten.getBody().get("problem").toString()).contains("needs the result");
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-3")).orElseThrow().status())
                .isEqualTo(Status.NEEDS_REVIEW);
        assertThat(store.find(Keys.hash("Payouts.batch", "", "B-1")).orElseThrow().status())
                .isEqualTo(Status.NEEDS_REVIEW);

        // a completed key is no unknown outcome: refused with 409
        IdempotentExecutor.builder(store).clock(later).build().execute(send, "P-2", new Object[] {"P-2"}, () -> "ok");
        WebEndpointResponse<Map<String, Object>> completed = endpoint.resolve(OPERATOR, "Payouts.send", "P-2", null,
                "not-executed", null, WHY);
        assertThat(completed.getStatus()).isEqualTo(409);
        assertThat(completed.getBody()).containsEntry("resolved", false);
    }

    @Test
    void theWriteOperationIsOffUnlessTurnedOn() {
        assertThat(IdempotencyReportEndpoint.class.getAnnotation(
                org.springframework.boot.actuate.endpoint.annotation.Endpoint.class).defaultAccess())
                .as("like Boot's shutdown: an operator turns the POST on explicitly")
                .isEqualTo(org.springframework.boot.actuate.endpoint.Access.READ_ONLY);
    }

    @Test
    void anAnonymousResolutionIsRefusedAndNothingChanges(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir);

        WebEndpointResponse<Map<String, Object>> answer = endpoint.resolve(ANONYMOUS, "Payouts.send", "P-1", null,
                "not-executed", null, WHY);

        assertThat(answer.getStatus()).isEqualTo(403);
        assertThat(answer.getBody().get("problem").toString()).contains("authenticated operator");
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-1")).orElseThrow().status())
                .as("the irreversible call is still held: the next retry does not run it again")
                .isEqualTo(Status.NEEDS_REVIEW);
        assertThat(endpoint.resolve(OPERATOR, "Payouts.send", "P-1", null, "not-executed", null, " ").getStatus())
                .as("a resolution without a reason").isEqualTo(400);
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-1"))).isPresent();
    }

    @Test
    void withRolesOnlyAnOperatorInOneResolvesAndReadsKeys(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        IdempotencyReportEndpoint endpoint = endpoint(dir, new IdempotencyReportEndpoint.Guard(
                org.springframework.boot.actuate.endpoint.Show.WHEN_AUTHORIZED, java.util.Set.of("OPERATOR"),
                org.springframework.transaction.support.TransactionOperations.withoutTransaction()));

        assertThat(endpoint.resolve(as("bob"), "Payouts.send", "P-1", null, "not-executed", null, WHY)
                .getStatus()).isEqualTo(403);
        assertThat(endpoint.report(as("bob")).get("needsReview").toString()).contains("key=******")
                .doesNotContain("P-1");
        assertThat(endpoint.report(as("carol", "OPERATOR")).get("needsReview").toString()).contains("key=P-1");
        assertThat(endpoint.resolve(as("carol", "OPERATOR"), "Payouts.send", "P-1", null, "not-executed", null,
                WHY).getStatus()).isEqualTo(200);
    }

    @Test
    @SuppressWarnings("unchecked")
    void theReportShowsWhoResolvedWhatAndWhyButNotToAnAnonymousReader(@TempDir Path dir) throws IOException {
        sendFailed("P-1");
        heldForReview("Payouts.send", "P-2");
        IdempotencyReportEndpoint endpoint = endpoint(dir);
        assertThat(endpoint.resolve(OPERATOR, "Payouts.send", "P-1", null, "not-executed", null,
                "the gateway's statement shows no payout").getStatus()).isEqualTo(200);

        List<Map<String, Object>> resolutions = (List<Map<String, Object>>) endpoint.report(OPERATOR)
                .get("resolutions");
        assertThat(resolutions).singleElement().satisfies(r -> assertThat(r).containsEntry("key", "P-1")
                .containsEntry("actor", "ops-alice").containsEntry("reason", "the gateway's statement shows no payout")
                .containsEntry("action", "RELEASED").containsEntry("before", "NEEDS_REVIEW")
                .containsEntry("tier", "IRREVERSIBLE"));
        assertThat(endpoint.format(OPERATOR, "markdown")).contains("## Resolved by hand")
                .contains("| Payouts.send | P-1 | IRREVERSIBLE | NEEDS_REVIEW | RELEASED | ops-alice |");

        Map<String, Object> anonymous = endpoint.report(ANONYMOUS);
        String text = anonymous.toString();
        assertThat(text).doesNotContain("P-1").doesNotContain("P-2").doesNotContain("ops-alice")
                .doesNotContain("statement");
        assertThat(anonymous).containsEntry("keysShown", false);
        assertThat(text).doesNotContain(java.util.HexFormat.of().formatHex(Keys.hash("args", "", "P-2")));
        assertThat((List<Map<String, Object>>) anonymous.get("backlog")).as("the counts are still there")
                .singleElement().satisfies(b -> assertThat(b).containsEntry("needsReview", 1));
        assertThat(endpoint.format(ANONYMOUS, "markdown")).doesNotContain("P-1").doesNotContain("ops-alice");
    }
}
