package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin.Operation;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The report answers the five questions per operation, from the inventory and from this node's counts. */
class IdempotencyReportTest {

    private static final Operation CARTS = new Operation("Carts.add", "com.example.Carts", "add",
            List.of("java.lang.String"), "void", Tier.REVERSIBLE, "#cartId", Duration.ofMinutes(15), "remove",
            Duration.ofSeconds(10), StoreDown.PROCEED_UNGUARDED);
    private static final Operation PAYOUTS = new Operation("Payouts.send", "com.example.Payouts", "send",
            List.of("java.lang.String", "java.math.BigDecimal"), "java.lang.String", Tier.IRREVERSIBLE,
            "'PAYOUT:' + #id", Duration.ofDays(7), null, Duration.ofSeconds(10));

    @Test
    void theMarkdownHasOneRowPerOperationWithItsFiveAnswers() {
        String md = IdempotencyReport.of(List.of(CARTS, PAYOUTS)).confirmationGate(false).toMarkdown();

        assertThat(md).contains("| Carts.add | Carts.add(String) | REVERSIBLE | `#cartId` | PT15M (under 24h) |"
                + " PROCEED_UNGUARDED | n/a | remove |");
        assertThat(md).contains("| Payouts.send | Payouts.send(String, BigDecimal) | IRREVERSIBLE |"
                + " `'PAYOUT:' + #id` | PT168H | FAIL | none: runs on the first request | none |");
        assertThat(md).doesNotContain("Since this node started");
    }

    @Test
    void atRunTimeItCountsDuplicatesUnguardedRunsAndHeldForReview() {
        IdempotencyReport.Counts counts = new IdempotencyReport.Counts();
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).listener(counts)
                .build();
        IdempotentOperation<String> op = IdempotentOperation.builder("Carts.add", Tier.REVERSIBLE,
                ResultType.of(String.class)).build();
        for (int i = 0; i < 3; i++) {
            executor.execute(op, "K-1", new Object[] {"K-1"}, () -> "ok");
        }
        IdempotencyReport report = IdempotencyReport.of(List.of(CARTS, PAYOUTS)).counts(counts);

        assertThat(report.toMarkdown()).contains("| Carts.add | 1 | 2 | 0 | 0 | 0 | 0 | 0 |")
                .contains("| Payouts.send | 0 | 0 | 0 | 0 | 0 | 0 | 0 |");
        JsonNode json = JsonMapper.builder().build().readTree(report.toJson());
        JsonNode carts = json.get("operations").get(0);
        assertThat(carts.get("onStoreDown").asString()).isEqualTo("PROCEED_UNGUARDED");
        assertThat(carts.get("shortTtl").asBoolean()).isTrue();
        assertThat(carts.get("counts").get("executed").asLong()).isEqualTo(1);
        assertThat(carts.get("counts").get("replayed_cached").asLong() + carts.get("counts").get("replayed")
                .asLong()).isEqualTo(2);
        assertThat(json.get("operations").get(1).get("confirmation").asString())
                .isEqualTo("ConfirmationGate, if one is configured");
    }

    @Test
    void theCommandLinePrintsTheBuildTimeReportOfAnInventory(@TempDir Path dir) throws Exception {
        Path inventory = dir.resolve("operations.json");
        Files.writeString(inventory, """
                {"format": 1, "operations": [{"operation": "Carts.add", "class": "com.example.Carts",
                  "method": "add", "parameterTypes": ["java.lang.String"], "returnType": "void",
                  "tier": "REVERSIBLE", "key": "#cartId", "ttl": "15m", "compensate": "remove",
                  "lockTimeout": "10s", "onStoreDown": "PROCEED_UNGUARDED"}]}
                """);
        PrintStream original = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            IdempotencyReport.main(new String[] {inventory.toString()});
        } finally {
            System.setOut(original);
        }
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("| Carts.add | Carts.add(String) | REVERSIBLE |"
                + " `#cartId` | PT15M (under 24h) | PROCEED_UNGUARDED |");
    }

    @Test
    void atRunTimeItShowsWhatWaitsForAnOperatorAsStored() {
        Instant start = Instant.parse("2026-01-01T10:00:00Z");
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        byte[] hash = dev.idempotency.internal.Keys.hash("Payouts.send", "", "PAYOUT:7");
        dev.idempotency.store.ClaimRequest claim = new dev.idempotency.store.ClaimRequest(hash, "Payouts.send",
                "PAYOUT:7", hash, Tier.IRREVERSIBLE, start, start.plusSeconds(30), start.plusSeconds(3600),
                Duration.ofSeconds(1));
        store.claim(claim);
        store.markNeedsReview(hash, claim.leaseUntil());
        byte[] other = dev.idempotency.internal.Keys.hash("Carts.add", "", "C-1");
        store.claim(new dev.idempotency.store.ClaimRequest(other, "Carts.add", "C-1", other, Tier.REVERSIBLE, start,
                start.plusSeconds(10), start.plusSeconds(3600), Duration.ofSeconds(1)));
        Instant later = start.plus(Duration.ofHours(3)).plusSeconds(125);
        IdempotencyAdmin admin = IdempotencyAdmin.builder(store)
                .clock(java.time.Clock.fixed(later, java.time.ZoneOffset.UTC)).build();

        assertThat(admin.backlog()).containsExactly(
                new dev.idempotency.store.Backlog("Carts.add", 0, null, 1, start.plusSeconds(10)),
                new dev.idempotency.store.Backlog("Payouts.send", 1, start, 0, null));
        assertThat(admin.needsReview(10)).singleElement().satisfies(e -> {
            assertThat(e.key()).isEqualTo("PAYOUT:7");
            assertThat(e.status()).isEqualTo(dev.idempotency.store.IdempotencyRecord.Status.NEEDS_REVIEW);
        });
        assertThat(admin.stuck(10)).singleElement().satisfies(e -> assertThat(e.stale()).isTrue());

        IdempotencyReport report = IdempotencyReport.of(List.of(CARTS, PAYOUTS)).backlog(admin, later);
        assertThat(report.toMarkdown()).contains("## Waiting for an operator (as stored, every node)")
                .contains("| Payouts.send | 1 | 3h2m | 0 | - |")
                .contains("| Carts.add | 0 | - | 1 | 3h1m |");
        JsonNode json = JsonMapper.builder().build().readTree(report.toJson());
        JsonNode payouts = json.get("backlog").get(1);
        assertThat(payouts.get("operation").asString()).isEqualTo("Payouts.send");
        assertThat(payouts.get("needsReview").asLong()).isEqualTo(1);
        assertThat(payouts.get("oldestNeedsReview").asString()).isEqualTo(start.toString());
        assertThat(payouts.get("oldestNeedsReviewAgeSeconds").asLong()).isEqualTo(3 * 3600 + 125);
    }

    @Test
    void aStoreThatCannotCountLeavesTheRestOfTheReportStanding() {
        dev.idempotency.store.IdempotencyStore counting = new dev.idempotency.store.ForwardingStore(
                new InMemoryIdempotencyStore()) {
            @Override
            public List<dev.idempotency.store.Backlog> backlog(Instant now) {
                throw new UnsupportedOperationException("this store cannot count records by status");
            }
        };
        IdempotencyReport report = IdempotencyReport.of(List.of(CARTS))
                .backlog(IdempotencyAdmin.builder(counting).build(), Instant.now());

        assertThat(report.toMarkdown()).contains("| Carts.add |")
                .contains("Not available: UnsupportedOperationException: this store cannot count");
        assertThat(report.toJson()).contains("\"backlogUnavailable\"");
    }

    @Test
    void agesReadInTheLargestUnitsThatFitAndAnEmptyBacklogSaysNothingWaits() {
        Instant at = Instant.parse("2026-01-10T00:00:00Z");
        List<dev.idempotency.store.Backlog> backlog = List.of(
                new dev.idempotency.store.Backlog("A.days", 1, at.minus(Duration.ofDays(2)).minusSeconds(3 * 3600), 1,
                        at.minusSeconds(42)),
                new dev.idempotency.store.Backlog("B.minutes", 2, at.minusSeconds(5 * 60 + 7), 0, null),
                new dev.idempotency.store.Backlog("C.future", 0, null, 1, at.plusSeconds(5)));

        String md = IdempotencyReport.of(List.of()).backlog(backlog, at).toMarkdown();

        assertThat(md).contains("| A.days | 1 | 2d3h | 1 | 42s |").contains("| B.minutes | 2 | 5m7s | 0 | - |")
                .contains("| C.future | 0 | - | 1 | 0s |");
        JsonNode json = JsonMapper.builder().build().readTree(IdempotencyReport.of(List.of()).backlog(backlog, at)
                .toJson());
        assertThat(json.get("backlog").get(0).get("longestStuckSeconds").asLong()).isEqualTo(42);
        assertThat(json.get("backlog").get(2).get("longestStuckSeconds").asLong()).isZero();
        assertThat(json.get("backlog").get(1).get("oldestStuckLease").isNull()).isTrue();
        assertThat(IdempotencyReport.of(List.of()).backlog(List.of(), at).toMarkdown())
                .contains("Nothing: no NEEDS_REVIEW record, no claim stuck past its lease.");
        assertThat(IdempotencyReport.of(List.of()).toMarkdown()).doesNotContain("Waiting for an operator");
    }

    @Test
    void theResolutionsByHandAreListedNewestFirstOrSaidToBeNone() {
        Instant at = Instant.parse("2026-01-10T00:00:00Z");
        dev.idempotency.store.IdempotencyAudit.Entry released = new dev.idempotency.store.IdempotencyAudit.Entry(
                "Payouts.send", "P|1", Tier.IRREVERSIBLE, dev.idempotency.store.IdempotencyRecord.Status.NEEDS_REVIEW,
                dev.idempotency.store.IdempotencyAudit.Action.RELEASED, new ResolvedBy("alice", "no payout\nseen"), at);

        String md = IdempotencyReport.of(List.of()).resolutions(List.of(released)).toMarkdown();

        assertThat(md).contains("## Resolved by hand (latest first)").contains("| 2026-01-10T00:00:00Z | Payouts.send"
                + " | P\\|1 | IRREVERSIBLE | NEEDS_REVIEW | RELEASED | alice | no payout seen |");
        JsonNode json = JsonMapper.builder().build().readTree(IdempotencyReport.of(List.of())
                .resolutions(List.of(released)).toJson());
        assertThat(json.get("resolutions").get(0).get("actor").asString()).isEqualTo("alice");
        assertThat(json.get("resolutions").get(0).get("before").asString()).isEqualTo("NEEDS_REVIEW");
        assertThat(IdempotencyReport.of(List.of()).resolutions(List.of()).toMarkdown()).contains("None recorded.");
        assertThat(IdempotencyReport.of(List.of()).toMarkdown()).doesNotContain("Resolved by hand");
        assertThat(JsonMapper.builder().build().readTree(IdempotencyReport.of(List.of()).toJson()).has("resolutions"))
                .isFalse();
        IdempotencyReport broken = IdempotencyReport.of(List.of()).resolutions(List.of(released))
                .resolutionsUnavailable("IllegalStateException: audit table gone");
        assertThat(broken.toMarkdown()).contains("## Resolved by hand\n\nNot available: IllegalStateException:"
                + " audit table gone").doesNotContain("alice");
        assertThat(JsonMapper.builder().build().readTree(broken.toJson()).get("resolutionsUnavailable").asString())
                .isEqualTo("IllegalStateException: audit table gone");
    }
}
