package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Claiming.Step;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Instant;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The claiming table of {@code docs/engine.md}, every row: what a caller does with the store's answer. "over" is a
 * lease or a time to live ending exactly now (the boundary counts as over), "live" one millisecond later; a record
 * "live by store" is one that a takeover or a hold just found unchanged.
 */
class ClaimingTest {

    private static final Instant NOW = Instant.parse("2026-01-01T10:00:00Z");
    private static final byte[] OURS = {1, 2, 3};
    private static final byte[] OTHER = {1, 2, 4};

    @ParameterizedTest(name = "{0} lease {1} ttl {2} payload {3} {4} liveByStore {5} nanosLeft {6} -> {7}")
    @CsvSource(textBlock = """
            # answer,     lease, ttl,  payload, tier,         liveByStore, nanosLeft, step
            ACQUIRED,     none,  live, same,    REVERSIBLE,   none,        1,         ACQUIRED
            ACQUIRED,     none,  live, same,    IRREVERSIBLE, none,        0,         ACQUIRED
            LOCK_TIMEOUT, none,  live, same,    REVERSIBLE,   none,        1,         IN_PROGRESS
            COMPLETED,    none,  live, same,    REVERSIBLE,   none,        1,         REPLAY
            COMPLETED,    none,  live, same,    IRREVERSIBLE, none,        0,         REPLAY
            COMPLETED,    none,  live, other,   REVERSIBLE,   none,        1,         KEY_REUSED
            COMPLETED,    none,  over, same,    REVERSIBLE,   none,        1,         TAKE_OVER
            COMPLETED,    none,  over, other,   IRREVERSIBLE, none,        1,         TAKE_OVER
            COMPLETED,    none,  over, same,    IRREVERSIBLE, another,     1,         TAKE_OVER
            COMPLETED,    none,  over, same,    REVERSIBLE,   this,        1,         REPLAY
            COMPLETED,    none,  over, other,   REVERSIBLE,   this,        1,         KEY_REUSED
            NEEDS_REVIEW, none,  live, same,    IRREVERSIBLE, none,        1,         OUTCOME_UNKNOWN
            NEEDS_REVIEW, none,  live, other,   IRREVERSIBLE, none,        1,         KEY_REUSED
            IN_FLIGHT,    live,  live, same,    REVERSIBLE,   none,        1,         WAIT
            IN_FLIGHT,    live,  live, same,    IRREVERSIBLE, none,        1,         WAIT
            IN_FLIGHT,    live,  live, same,    REVERSIBLE,   none,        0,         IN_PROGRESS
            IN_FLIGHT,    live,  live, other,   REVERSIBLE,   none,        1,         KEY_REUSED
            IN_FLIGHT,    none,  live, same,    REVERSIBLE,   none,        1,         WAIT
            IN_FLIGHT,    over,  live, same,    REVERSIBLE,   none,        1,         TAKE_OVER
            IN_FLIGHT,    over,  live, same,    REVERSIBLE,   another,     0,         TAKE_OVER
            IN_FLIGHT,    over,  live, same,    REVERSIBLE,   this,        1,         WAIT
            IN_FLIGHT,    over,  live, same,    REVERSIBLE,   this,        0,         IN_PROGRESS
            IN_FLIGHT,    over,  live, other,   REVERSIBLE,   none,        1,         KEY_REUSED
            IN_FLIGHT,    over,  live, same,    IRREVERSIBLE, none,        1,         HOLD_STALE
            IN_FLIGHT,    over,  live, same,    IRREVERSIBLE, none,        0,         HOLD_STALE
            IN_FLIGHT,    over,  live, same,    IRREVERSIBLE, this,        1,         WAIT
            IN_FLIGHT,    over,  live, other,   IRREVERSIBLE, none,        1,         KEY_REUSED
            """)
    void stepsEveryRowOfTheTable(String answer, String lease, String ttl, String payload, Tier tier,
            String liveByStore, long nanosLeft, Step expected) {
        ClaimResult result;
        IdempotencyRecord record = null;
        switch (answer) {
            case "ACQUIRED" -> result = ClaimResult.acquired(false);
            case "LOCK_TIMEOUT" -> result = ClaimResult.lockTimeout();
            default -> {
                record = record(Status.valueOf(answer), tier, payload.equals("same") ? OURS : OTHER,
                        lease.equals("none") ? null : lease.equals("over") ? NOW : NOW.plusMillis(1),
                        ttl.equals("over") ? NOW : NOW.plusMillis(1));
                result = ClaimResult.existing(record);
            }
        }
        IdempotencyRecord known = switch (liveByStore) {
            case "none" -> null;
            // an equal record read again, not the same instance
            case "this" -> copy(record);
            default -> record(Status.IN_FLIGHT, tier, OURS, NOW.plusSeconds(30), NOW.plusSeconds(60));
        };

        assertThat(Claiming.next(result, NOW, tier, OURS, known, nanosLeft)).isEqualTo(expected);
    }

    @Test
    void aRecordTheStoreAnswersUnchangedIsLiveByStoreOtherwiseTheOneKnownBeforeStays() {
        IdempotencyRecord record = record(Status.IN_FLIGHT, Tier.REVERSIBLE, OURS, NOW, NOW.plusSeconds(60));
        IdempotencyRecord before = record(Status.IN_FLIGHT, Tier.REVERSIBLE, OURS, NOW.minusSeconds(1),
                NOW.plusSeconds(60));
        IdempotencyRecord renewed = record(Status.IN_FLIGHT, Tier.REVERSIBLE, OURS, NOW.plusSeconds(30),
                NOW.plusSeconds(60));

        assertThat(Claiming.liveByStore(record, ClaimResult.existing(copy(record)), before)).isSameAs(record);
        assertThat(Claiming.liveByStore(record, ClaimResult.existing(copy(record)), null)).isSameAs(record);
        assertThat(Claiming.liveByStore(record, ClaimResult.existing(renewed), before)).isSameAs(before);
        assertThat(Claiming.liveByStore(record, ClaimResult.existing(renewed), null)).isNull();
        assertThat(Claiming.liveByStore(record, ClaimResult.acquired(true), before)).isSameAs(before);
        assertThat(Claiming.liveByStore(record, ClaimResult.lockTimeout(), before)).isSameAs(before);
    }

    private static IdempotencyRecord record(Status status, Tier tier, byte[] fingerprint, @Nullable Instant lease,
            Instant expiresAt) {
        return new IdempotencyRecord(new byte[] {9}, "Orders.create", "ORDER:1", fingerprint.clone(), tier, status,
                status == Status.COMPLETED ? new byte[] {'1'} : null, lease, NOW.minusSeconds(60), expiresAt);
    }

    private static IdempotencyRecord copy(IdempotencyRecord r) {
        return new IdempotencyRecord(r.keyHash().clone(), r.operation(), r.key(), r.fingerprint().clone(), r.tier(),
                r.status(), r.result() == null ? null : r.result().clone(), r.leaseUntil(), r.createdAt(),
                r.expiresAt());
    }
}
