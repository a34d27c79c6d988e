package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.TierRulesTest.DiesBeforeRecording;
import dev.idempotency.TierRulesTest.MutableClock;
import dev.idempotency.TransactionBridge.Completion;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Attempt;
import dev.idempotency.store.IdempotencyAudit.Attempt.Kind;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.InMemoryIdempotencyAudit;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The attempts that meet a key in trouble, as the executor records them in the audit it was given and the admin reads
 * them back ({@link IdempotentExecutor.Builder#attempts}, {@link IdempotencyAdmin#attempts}): what is recorded, in
 * which order, where (in or outside the caller's transaction), and that the calls that go well record nothing.
 */
class AttemptsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T10:00:00Z"));
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final TransactionEdgesTest.Transaction transaction = new TransactionEdgesTest.Transaction();
    /** Every attempt appended, with whether it was written outside the caller's transaction. */
    private final List<String> written = new ArrayList<>();
    private final IdempotencyAudit audit = new Watched(new InMemoryIdempotencyAudit());
    private final IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(clock)
            .transactions(transaction).attempts(audit).build();
    private final IdempotencyAdmin admin = IdempotencyAdmin.builder(store).clock(clock).audit(audit).build();
    private final AtomicInteger runs = new AtomicInteger();

    private static IdempotentOperation<String> operation(String name, Tier tier) {
        return IdempotentOperation.builder(name, tier, ResultType.of(String.class)).lockTimeout("200ms")
                .lease(Duration.ofSeconds(6)).ttl("1h").build();
    }

    private String call(IdempotentExecutor on, IdempotentOperation<String> op, String key, Object... args) {
        return on.execute(op, key, args, () -> "receipt-" + runs.incrementAndGet());
    }

    private void crashAfterRunning(IdempotentOperation<String> op, String key, Object... args) {
        IdempotentExecutor crashing = IdempotentExecutor.builder(new DiesBeforeRecording(store)).clock(clock)
                .attempts(audit).build();
        assertThatThrownBy(() -> call(crashing, op, key, args)).isInstanceOf(IdempotencyStoreException.class);
    }

    @Test
    void aFirstRunAndItsReplaysRecordNothing() {
        IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
        transaction.begin();
        assertThat(call(executor, op, "ORDER:1", "ORDER:1")).isEqualTo("receipt-1");
        transaction.end(Completion.COMMITTED);
        assertThat(call(executor, op, "ORDER:1", "ORDER:1")).isEqualTo("receipt-1");
        assertThat(call(executor, op, "ORDER:1", "ORDER:1")).isEqualTo("receipt-1");

        assertThat(written).as("the happy path writes nothing to the audit").isEmpty();
        assertThat(admin.attempts(op.name(), "", "ORDER:1")).isEmpty();
    }

    @Test
    void aHeldKeyShowsTheHoldAndEveryRefusalOldestFirstWrittenOutsideTheCallersTransaction() {
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);
        crashAfterRunning(op, "REFUND:1", "REFUND:1");
        Instant claimed = admin.find(op.name(), "REFUND:1").orElseThrow().createdAt();
        clock.advance(Duration.ofSeconds(7));
        Instant held = clock.instant();

        transaction.begin();
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:1"))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
        transaction.end(Completion.ROLLED_BACK);
        clock.advance(Duration.ofMinutes(3));
        transaction.begin();
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:1"))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
        transaction.end(Completion.ROLLED_BACK);

        List<Attempt> attempts = admin.attempts(op.name(), "", "REFUND:1");
        assertThat(attempts).extracting(Attempt::kind).containsExactly(Kind.HELD_STALE, Kind.REFUSED_HELD);
        assertThat(attempts).extracting(Attempt::at).containsExactly(held, held.plus(Duration.ofMinutes(3)));
        assertThat(attempts).extracting(Attempt::met).containsExactly(Status.IN_FLIGHT, Status.NEEDS_REVIEW);
        assertThat(attempts.get(0).detail()).contains("the claim of " + claimed).contains("lease ran out");
        assertThat(attempts).allSatisfy(a -> {
            assertThat(a.operation()).isEqualTo("Payments.refund");
            assertThat(a.key()).isEqualTo("REFUND:1");
            assertThat(a.tier()).isEqualTo(Tier.IRREVERSIBLE);
        });
        assertThat(written).as("a refusal must outlive the rollback that follows it")
                .containsExactly("HELD_STALE outside", "REFUSED_HELD outside");
        assertThat(admin.history(op.name(), "REFUND:1")).as("attempts are not resolutions").isEmpty();
        assertThat(admin.resolutions(10)).isEmpty();
    }

    @Test
    void aReversibleStaleClaimTakenOverIsWrittenInTheTransactionThatTookItOver() {
        IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
        crashAfterRunning(op, "ORDER:2", "ORDER:2");
        Instant claimed = admin.find(op.name(), "ORDER:2").orElseThrow().createdAt();
        clock.advance(Duration.ofSeconds(7));

        transaction.begin();
        assertThat(call(executor, op, "ORDER:2", "ORDER:2")).isEqualTo("receipt-2");
        transaction.end(Completion.COMMITTED);

        assertThat(admin.attempts(op.name(), "", "ORDER:2")).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Kind.TOOK_OVER_STALE);
            assertThat(a.detail()).contains("the claim of " + claimed);
        });
        // the in-memory store joins no transaction: its takeover committed at once, and so is its record
        assertThat(written).containsExactly("TOOK_OVER_STALE outside");
    }

    @Test
    void aPayloadMismatchNamesBothDigestsAndAnAttemptRefusedAsInProgressIsRecorded() {
        IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
        assertThat(call(executor, op, "ORDER:3", "ORDER:3", 1)).isEqualTo("receipt-1");
        String digest = admin.find(op.name(), "ORDER:3").orElseThrow().argumentsDigest();
        assertThatThrownBy(() -> call(executor, op, "ORDER:3", "ORDER:3", 2))
                .isInstanceOf(IdempotencyKeyReusedException.class);

        crashAfterRunning(op, "ORDER:4", "ORDER:4");
        assertThatThrownBy(() -> call(executor, op, "ORDER:4", "ORDER:4"))
                .as("within its lease the crashed claim still counts as in flight")
                .isInstanceOf(IdempotencyInProgressException.class);

        assertThat(admin.attempts(op.name(), "", "ORDER:3")).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Kind.KEY_REUSED);
            assertThat(a.met()).isEqualTo(Status.COMPLETED);
            assertThat(a.detail()).matches("its arguments' digest [0-9a-f]{64} differs from the key's " + digest)
                    .doesNotContain("digest " + digest);
        });
        assertThat(admin.attempts(op.name(), "", "ORDER:4")).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Kind.REFUSED_IN_PROGRESS);
            assertThat(a.detail()).contains("lock timeout of PT0.2S");
        });
        assertThat(runs).hasValue(2);
    }

    @Test
    void aCallerTurnedAwayBecauseTooManyWaitIsNotRecordedTheOneThatWaitedIs() throws Exception {
        // a lock timeout long enough that the second caller surely comes while the first still waits
        IdempotentOperation<String> op = IdempotentOperation.builder("Orders.create", Tier.REVERSIBLE,
                ResultType.of(String.class)).lockTimeout("2s").lease(Duration.ofSeconds(6)).ttl("1h").build();
        crashAfterRunning(op, "ORDER:6", "ORDER:6");
        IdempotentExecutor oneWaiter = IdempotentExecutor.builder(store).clock(clock).maxWaitersPerKey(1)
                .attempts(audit).build();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<?> waiting = pool.submit(() -> call(oneWaiter, op, "ORDER:6", "ORDER:6"));
            byte[] hash = dev.idempotency.internal.Keys.hash(op.name(), "", "ORDER:6");
            while (oneWaiter.callersOf(hash) == 0) {
                Thread.onSpinWait();
            }
            assertThatThrownBy(() -> call(oneWaiter, op, "ORDER:6", "ORDER:6"))
                    .isInstanceOf(IdempotencyInProgressException.class).hasMessageContaining("callers waiting");
            assertThatThrownBy(() -> waiting.get(5, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IdempotencyInProgressException.class);
        } finally {
            pool.shutdownNow();
        }
        assertThat(admin.attempts(op.name(), "", "ORDER:6")).singleElement().extracting(Attempt::kind)
                .isEqualTo(Kind.REFUSED_IN_PROGRESS);
    }

    @Test
    void anIrreversibleAttemptThatThrowsIsHeldForReviewWithItsException() {
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);
        assertThatThrownBy(() -> executor.execute(op, "REFUND:2", new Object[] {"REFUND:2"}, () -> {
            throw new IllegalStateException("gateway timed out");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(admin.find(op.name(), "REFUND:2").orElseThrow().status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(admin.attempts(op.name(), "", "REFUND:2")).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Kind.HELD_FOR_REVIEW);
            assertThat(a.detail()).isEqualTo("it ended with java.lang.IllegalStateException: gateway timed out");
        });
    }

    @Test
    void anAuditThatFailsLeavesTheCallsOutcomeAsItWasAndIsLogged() {
        List<LogRecord> logged = new ArrayList<>();
        Logger logger = Logger.getLogger(IdempotentExecutor.class.getName());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try {
            IdempotencyAudit broken = new IdempotencyAudit() {
                @Override
                public void append(byte[] keyHash, Entry entry) {
                }

                @Override
                public List<Entry> history(byte[] keyHash, int limit) {
                    return List.of();
                }

                @Override
                public List<Entry> recent(int limit) {
                    return List.of();
                }

                @Override
                public void attempt(byte[] keyHash, Attempt attempt) {
                    throw new IllegalStateException("the audit table is gone");
                }
            };
            IdempotentExecutor withBroken = IdempotentExecutor.builder(store).clock(clock).attempts(broken).build();
            IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
            call(withBroken, op, "ORDER:5", "ORDER:5", 1);
            assertThatThrownBy(() -> call(withBroken, op, "ORDER:5", "ORDER:5", 2))
                    .isInstanceOf(IdempotencyKeyReusedException.class);
        } finally {
            logger.removeHandler(handler);
        }
        assertThat(logged).singleElement().satisfies(r -> {
            assertThat(r.getMessage()).contains("could not record the attempt KEY_REUSED Orders.create 'ORDER:5'");
            assertThat(r.getThrown()).hasMessage("the audit table is gone");
        });
    }

    @Test
    void theAuditKeepsTheFirstAttemptsOfAKeyOnly() {
        InMemoryIdempotencyAudit memory = new InMemoryIdempotencyAudit(1_000);
        byte[] hash = {1, 2, 3};
        for (int i = 0; i < IdempotencyAudit.ATTEMPTS_KEPT + 5; i++) {
            memory.attempt(hash, new Attempt("Payments.refund", "REFUND:9", Tier.IRREVERSIBLE, Status.NEEDS_REVIEW,
                    Kind.REFUSED_HELD, "n" + i, Instant.EPOCH.plusSeconds(i)));
        }
        memory.attempt(new byte[] {9}, new Attempt("Payments.refund", "REFUND:10", Tier.IRREVERSIBLE,
                Status.NEEDS_REVIEW, Kind.REFUSED_HELD, "other key", Instant.EPOCH));

        List<Attempt> kept = memory.attempts(hash, 1_000);
        assertThat(kept).hasSize(IdempotencyAudit.ATTEMPTS_KEPT);
        assertThat(kept.get(0).detail()).isEqualTo("n0");
        assertThat(kept.get(kept.size() - 1).detail()).isEqualTo("n" + (IdempotencyAudit.ATTEMPTS_KEPT - 1));
        assertThat(memory.attempts(new byte[] {9}, 10)).singleElement().extracting(Attempt::detail)
                .isEqualTo("other key");
        assertThat(memory.recent(10)).as("attempts are not resolutions").isEmpty();
    }

    /** Notes where each attempt is written, and writes it. */
    private final class Watched implements IdempotencyAudit {
        private final IdempotencyAudit delegate;

        Watched(IdempotencyAudit delegate) {
            this.delegate = delegate;
        }

        @Override
        public void append(byte[] keyHash, Entry entry) {
            delegate.append(keyHash, entry);
        }

        @Override
        public List<Entry> history(byte[] keyHash, int limit) {
            return delegate.history(keyHash, limit);
        }

        @Override
        public List<Entry> recent(int limit) {
            return delegate.recent(limit);
        }

        @Override
        public void attempt(byte[] keyHash, Attempt attempt) {
            written.add(attempt.kind() + (transaction.outsideNow || !transaction.isTransactionActive() ? " outside"
                    : " inside"));
            delegate.attempt(keyHash, attempt);
        }

        @Override
        public List<Attempt> attempts(byte[] keyHash, int limit) {
            return delegate.attempts(keyHash, limit);
        }
    }
}
