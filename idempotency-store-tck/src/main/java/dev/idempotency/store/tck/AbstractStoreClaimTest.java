package dev.idempotency.store.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Layer 1 of the store TCK: claim, in flight, complete and replay, mismatch, release, and keys stored exactly.
 * Every store passes it.
 */
public abstract class AbstractStoreClaimTest extends AbstractStoreTest {

    /** What the executor tests return: a record with a decimal and a list of records. */
    public record Receipt(String id, BigDecimal total, List<Line> lines) {
    }

    /** One line of a {@link Receipt}. */
    public record Line(String sku, int quantity) {
    }

    @Test
    void aFreshKeyIsAcquiredAndRecordedInFlight() {
        ClaimRequest r = request(key("fresh"));
        assertThat(store.find(r.keyHash())).isEmpty();
        ClaimResult result = store.claim(r);
        assertThat(result.kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);
        assertThat(result.record()).isNull();
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
    }

    @Test
    void aSecondClaimGetsTheRecordInFlightAndChangesNothing() {
        ClaimRequest first = request(key("in-flight"));
        store.claim(first);
        clock.advance(Duration.ofMillis(5));
        ClaimResult second = store.claim(request(key("in-flight"), "other args", now()));
        assertThat(second.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(second.record()).isEqualTo(first.toInFlightRecord());
        assertThat(second.record().isStale(now())).isFalse();
        assertThat(store.find(first.keyHash())).contains(first.toInFlightRecord());
    }

    @Test
    void aCompletedKeyIsAnsweredWithItsResultAndFingerprint() {
        ClaimRequest first = request(key("completed"));
        store.claim(first);
        byte[] result = "{\"id\":\"r-1\"}".getBytes(StandardCharsets.UTF_8);
        Instant expiresAt = now().plus(Duration.ofMinutes(10));
        assertThat(store.complete(first.keyHash(), first.leaseUntil(), result, expiresAt)).isTrue();

        IdempotencyRecord expected = first.toInFlightRecord().with(Status.COMPLETED, result, null, expiresAt);
        ClaimResult duplicate = store.claim(request(key("completed"), "args", now().plusMillis(1)));
        assertThat(duplicate.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(duplicate.record()).isEqualTo(expected);
        assertThat(duplicate.record().fingerprint()).isEqualTo(first.fingerprint());
        assertThat(store.find(first.keyHash())).contains(expected);
    }

    @Test
    void aReusedKeyReportsTheFirstCallsFingerprint() {
        ClaimRequest first = request(key("reused"), "amount=10", now());
        store.claim(first);
        store.complete(first.keyHash(), first.leaseUntil(), new byte[] {1}, now().plusSeconds(60));
        ClaimResult other = store.claim(request(key("reused"), "amount=99", now()));
        assertThat(other.record().fingerprint()).isEqualTo(fingerprint("amount=10"))
                .isNotEqualTo(fingerprint("amount=99"));
    }

    @Test
    void completeReleaseAndMarkNeedsReviewActOnlyOnTheClaimTheLeaseNames() {
        ClaimRequest r = request(key("conditional"));
        store.claim(r);
        Instant wrong = r.leaseUntil().plusMillis(1);
        assertThat(store.complete(r.keyHash(), wrong, new byte[] {1}, now())).isFalse();
        assertThat(store.release(r.keyHash(), wrong)).isFalse();
        assertThat(store.markNeedsReview(r.keyHash(), wrong)).isFalse();
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());

        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, now().plusSeconds(9))).isTrue();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {2}, now().plusSeconds(9))).isFalse();
        assertThat(store.release(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.find(r.keyHash()).orElseThrow().result()).containsExactly(1);

        byte[] absent = keyHash(key("absent"));
        assertThat(store.complete(absent, r.leaseUntil(), new byte[] {1}, now())).isFalse();
        assertThat(store.release(absent, r.leaseUntil())).isFalse();
        assertThat(store.markNeedsReview(absent, r.leaseUntil())).isFalse();
        assertThat(store.find(absent)).isEmpty();
    }

    @Test
    void aReleasedClaimFreesTheKey() {
        ClaimRequest r = request(key("released"));
        store.claim(r);
        assertThat(store.release(r.keyHash(), r.leaseUntil())).isTrue();
        assertThat(store.find(r.keyHash())).isEmpty();
        ClaimRequest again = request(key("released"), "args", now().plusMillis(7));
        assertThat(store.claim(again).isAcquired()).isTrue();
        assertThat(store.find(r.keyHash())).contains(again.toInFlightRecord());
    }

    @Test
    void instantsAndBytesComeBackExactly() {
        Instant odd = Instant.parse("2031-12-31T23:59:59.999Z");
        ClaimRequest r = new ClaimRequest(keyHash(key("exact")), "TCK.op", key("exact"), fingerprint("x"),
                Tier.IRREVERSIBLE, odd, odd.plusMillis(1), odd.plus(Duration.ofDays(400)), Duration.ofSeconds(1));
        store.claim(r);
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        Instant expires = Instant.parse("1999-06-15T00:00:00.001Z");
        store.complete(r.keyHash(), r.leaseUntil(), all, expires);
        IdempotencyRecord done = store.find(r.keyHash()).orElseThrow();
        assertThat(done.result()).isEqualTo(all);
        assertThat(done.expiresAt()).isEqualTo(expires);
        assertThat(done.tier()).isEqualTo(Tier.IRREVERSIBLE);
        assertThat(done.createdAt()).isEqualTo(odd);
    }

    @Test
    void readableKeysAreStoredAsSent() {
        for (String k : new String[] {"Straße-ÄÖÜ", "trailing  ", "  leading", "emoji-\uD83D\uDE00-✓",
                "e\u0301-decomposed", "日本語のキー", "x".repeat(255 - 9)}) {
            ClaimRequest r = request(key(k));
            store.claim(r);
            assertThat(store.find(r.keyHash()).orElseThrow().key()).isEqualTo(key(k));
        }
    }

    @Test
    void keysDifferingInCaseOrTrailingSpacesAreDistinctAndNormalizationFormsAreOne() {
        IdempotentExecutor executor = executor();
        IdempotentOperation<String> op = IdempotentOperation
                .builder("TCK.keys", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        AtomicInteger runs = new AtomicInteger();
        String base = key("Café");
        String[] distinct = {base, base.toLowerCase(java.util.Locale.ROOT), base.toUpperCase(java.util.Locale.ROOT),
                base + " ", base + "  ", " " + base};
        for (String k : distinct) {
            assertThat(executor.execute(op, k, new Object[0], () -> k + "#" + runs.incrementAndGet()))
                    .isEqualTo(k + "#" + runs.get());
        }
        assertThat(runs).hasValue(distinct.length);
        // the same key in NFD (e + combining acute accent) is the same key: it replays the NFC call's result
        String nfd = base.replace("é", "e\u0301");
        assertThat(nfd).isNotEqualTo(base);
        assertThat(executor.execute(op, nfd, new Object[0], () -> "ran again")).isEqualTo(base + "#1");
        assertThat(runs).hasValue(distinct.length);
    }

    @Test
    void theExecutorRunsOnceAndReplaysTheResultAsItsDeclaredType() {
        IdempotentExecutor executor = executor();
        IdempotentOperation<Receipt> op = IdempotentOperation
                .builder("TCK.receipt", Tier.REVERSIBLE, ResultType.of(Receipt.class)).build();
        AtomicInteger runs = new AtomicInteger();
        Object[] args = {"A-1", new BigDecimal("12.30")};
        Receipt first = executor.execute(op, key("A-1"), args, () -> new Receipt("r-" + runs.incrementAndGet(),
                new BigDecimal("12.30"), List.of(new Line("SKU-1", 2), new Line("SKU-2", 1))));
        Receipt replay = executor.execute(op, key("A-1"), args, () -> new Receipt("r-" + runs.incrementAndGet(),
                BigDecimal.ZERO, List.of()));
        assertThat(runs).hasValue(1);
        assertThat(replay).isEqualTo(first);
        assertThat(replay.total()).hasToString("12.30");
        assertThatThrownBy(() -> executor.execute(op, key("A-1"), new Object[] {"A-1", BigDecimal.ONE},
                () -> first)).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void aFailedExecutionLeavesNoRecordAndTheRetryRuns() {
        IdempotentExecutor executor = executor();
        IdempotentOperation<String> op = IdempotentOperation
                .builder("TCK.fails", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        assertThatThrownBy(() -> executor.execute(op, key("F-1"), new Object[0], () -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThat(store.find(dev.idempotency.internal.Keys.hash("TCK.fails", "", key("F-1")))).isEmpty();
        assertThat(executor.execute(op, key("F-1"), new Object[0], () -> "second")).isEqualTo("second");
    }
}
