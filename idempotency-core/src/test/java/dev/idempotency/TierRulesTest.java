package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The rows of the tier table (docs/tiers.md) at run time, on the in-memory store. A crash between claim and result is
 * a store whose {@code complete} fails (the process died before recording), and the lease runs out by moving an
 * injected clock, never by sleeping.
 */
class TierRulesTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private static final int THREADS = 8;

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T10:00:00Z"));
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(clock)
            .listener(events::add).build();
    private final IdempotencyAdmin admin = IdempotencyAdmin.builder(store).clock(clock).build();
    private final AtomicInteger runs = new AtomicInteger();

    private static IdempotentOperation<String> operation(String name, Tier tier) {
        return IdempotentOperation.builder(name, tier, ResultType.of(String.class)).lockTimeout("1s")
                .lease(Duration.ofSeconds(6)).ttl("1h").ignoredArguments(1).build();
    }

    private String call(IdempotentExecutor on, IdempotentOperation<String> op, String key, Object... args) {
        return on.execute(op, key, args, () -> "receipt-" + runs.incrementAndGet());
    }

    /** An attempt that ran the method and died before its result was recorded: its claim stays in flight. */
    private void crashAfterRunning(IdempotentOperation<String> op, String key, Object... args) {
        IdempotentExecutor crashing = IdempotentExecutor.builder(new DiesBeforeRecording(store)).clock(clock).build();
        assertThatThrownBy(() -> call(crashing, op, key, args)).isInstanceOf(IdempotencyStoreException.class);
        assertThat(admin.find(op.name(), key)).get().extracting(IdempotencyAdmin.Entry::status)
                .isEqualTo(Status.IN_FLIGHT);
    }

    @Test
    void readOnlyNeverTouchesTheStore() {
        IdempotencyStore untouchable = (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                    throw new AssertionError("READ_ONLY touched the store: " + method.getName());
                });
        IdempotentExecutor readOnly = IdempotentExecutor.builder(untouchable).listener(events::add).build();
        IdempotentOperation<String> op = operation("Catalog.price", Tier.READ_ONLY);

        assertThat(call(readOnly, op, "SKU-1", "SKU-1", null)).isEqualTo("receipt-1");
        assertThat(call(readOnly, op, "SKU-1", "SKU-1", null)).isEqualTo("receipt-2");
        assertThat(runs).hasValue(2);
        assertThat(events).isEmpty();
    }

    @Test
    void aReversibleStaleClaimIsTakenOverByExactlyOneOfManyCallersAndRunsAgain() throws Exception {
        IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
        crashAfterRunning(op, "ORDER:1", "ORDER:1", null);
        assertThat(runs).hasValue(1);

        clock.advance(Duration.ofSeconds(5));
        assertThatThrownBy(() -> call(executor, op, "ORDER:1", "ORDER:1", null))
                .as("within its lease the crashed claim still counts as in flight")
                .isInstanceOf(IdempotencyInProgressException.class);
        assertThat(runs).hasValue(1);

        clock.advance(Duration.ofSeconds(2)); // past the 6s lease: stale
        AtomicInteger traces = new AtomicInteger();
        List<String> results = concurrently(() -> call(executor, op, "ORDER:1", "ORDER:1",
                "trace-" + traces.incrementAndGet()));
        assertThat(runs).as("the takeover ran the method once more, once").hasValue(2);
        assertThat(results).hasSize(THREADS).containsOnly("receipt-2");
        assertThat(events).filteredOn(e -> e.outcome() == Outcome.EXECUTED).hasSize(1);
        assertThat(admin.find(op.name(), "ORDER:1")).get().extracting(IdempotencyAdmin.Entry::status)
                .isEqualTo(Status.COMPLETED);
    }

    @Test
    void aReversibleStaleClaimWithOtherArgumentsIsAKeyReuse() {
        IdempotentOperation<String> op = operation("Orders.create", Tier.REVERSIBLE);
        crashAfterRunning(op, "ORDER:1", "ORDER:1", null);
        clock.advance(Duration.ofSeconds(7));
        assertThatThrownBy(() -> call(executor, op, "ORDER:1", "ORDER:2", null))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void anIrreversibleStaleClaimStopsEveryCallerAndStaysBlockedForReview() throws Exception {
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);
        crashAfterRunning(op, "REFUND:1", "REFUND:1", null);
        clock.advance(Duration.ofSeconds(7));

        List<Object> outcomes = concurrentlyCatching(() -> call(executor, op, "REFUND:1", "REFUND:1", null));
        assertThat(outcomes).hasSize(THREADS).allSatisfy(o -> assertThat(o)
                .isInstanceOf(IdempotencyOutcomeUnknownException.class));
        IdempotencyOutcomeUnknownException unknown = (IdempotencyOutcomeUnknownException) outcomes.get(0);
        assertThat(unknown.operation()).isEqualTo("Payments.refund");
        assertThat(unknown.key()).isEqualTo("REFUND:1");
        assertThat(unknown).hasMessageContaining("IdempotencyAdmin");
        assertThat(runs).as("the refund is never sent twice").hasValue(1);

        IdempotencyAdmin.Entry entry = admin.find(op.name(), "REFUND:1").orElseThrow();
        assertThat(entry.status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(entry.key()).isEqualTo("REFUND:1");
        assertThat(entry.tier()).isEqualTo(Tier.IRREVERSIBLE);
        assertThat(entry.hasResult()).isFalse();

        clock.advance(Duration.ofDays(30)); // review waits for a human, however long
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:1", null))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(runs).hasValue(1);
        assertThat(store.purgeExpired(clock.instant(), 100)).as("the purge never drops a record under review")
                .isZero();
    }

    @Test
    void resolvedAsExecutedTheRecordedResultReplaysAndTheMethodNeverRunsAgain() {
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);
        crashAfterRunning(op, "REFUND:1", "REFUND:1", null);
        clock.advance(Duration.ofSeconds(7));
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:1", null))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);

        // the operator checked the gateway: the refund went out as "gateway-ref-9"
        assertThat(admin.resolveExecuted(op.name(), "REFUND:1", "gateway-ref-9", ResultType.of(String.class),
                Duration.ofDays(7), BY)).isTrue();

        events.clear();
        assertThat(call(executor, op, "REFUND:1", "REFUND:1", "another trace")).isEqualTo("gateway-ref-9");
        assertThat(call(executor, op, "REFUND:1", "REFUND:1", null)).isEqualTo("gateway-ref-9");
        assertThat(runs).hasValue(1);
        assertThat(events).extracting(IdempotencyEvent::outcome).containsExactly(Outcome.REPLAYED, Outcome.REPLAYED);
        IdempotencyAdmin.Entry entry = admin.find(op.name(), "REFUND:1").orElseThrow();
        assertThat(entry.status()).isEqualTo(Status.COMPLETED);
        assertThat(entry.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofDays(7)));
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:2", null))
                .as("the resolved record keeps the fingerprint of the call that claimed it")
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }

    @Test
    void releasedTheNextCallRuns() {
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);
        crashAfterRunning(op, "REFUND:1", "REFUND:1", null);
        clock.advance(Duration.ofSeconds(7));
        assertThatThrownBy(() -> call(executor, op, "REFUND:1", "REFUND:1", null))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);

        // the operator checked the gateway: the refund never went out
        assertThat(admin.release(op.name(), "REFUND:1", BY)).isTrue();
        assertThat(admin.find(op.name(), "REFUND:1")).isEmpty();

        assertThat(call(executor, op, "REFUND:1", "REFUND:1", null)).isEqualTo("receipt-2");
        assertThat(call(executor, op, "REFUND:1", "REFUND:1", null)).isEqualTo("receipt-2");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aConfirmationGateRefusesUntilTheSameCallIsResentWithItsConfirmation() {
        List<ConfirmationGate.Call> asked = new ArrayList<>();
        ConfirmationGate gate = call -> {
            asked.add(call);
            if (!"CONFIRMED".equals(call.arguments().get(1))) {
                throw new ConfirmationRequiredException(call.operation(), call.key(),
                        "refund " + call.key() + " needs a confirmation");
            }
        };
        IdempotentExecutor gated = IdempotentExecutor.builder(store).clock(clock).confirmationGate(gate)
                .listener(events::add).build();
        IdempotentOperation<String> op = operation("Payments.refund", Tier.IRREVERSIBLE);

        assertThatThrownBy(() -> call(gated, op, "REFUND:7", "REFUND:7", null))
                .isInstanceOfSatisfying(ConfirmationRequiredException.class, e -> {
                    assertThat(e.key()).isEqualTo("REFUND:7");
                    assertThat(e.operation()).isEqualTo("Payments.refund");
                });
        assertThat(runs).hasValue(0);
        assertThat(admin.find(op.name(), "REFUND:7")).as("a refusal leaves no claim behind").isEmpty();

        // the same call, resent with its confirmation in the ignored argument: same fingerprint, it runs
        assertThat(call(gated, op, "REFUND:7", "REFUND:7", "CONFIRMED")).isEqualTo("receipt-1");
        // a later duplicate replays without asking again, whatever its confirmation
        assertThat(call(gated, op, "REFUND:7", "REFUND:7", null)).isEqualTo("receipt-1");
        assertThat(runs).hasValue(1);
        assertThat(asked).hasSize(2);
        assertThat(events).extracting(IdempotencyEvent::outcome)
                .containsExactly(Outcome.CONFIRMATION_REQUIRED, Outcome.EXECUTED, Outcome.REPLAYED);
    }

    @Test
    void theGateIsNotConsultedForReversibleCalls() {
        IdempotentExecutor gated = IdempotentExecutor.builder(store).clock(clock).confirmationGate(call -> {
            throw new ConfirmationRequiredException(call.operation(), call.key(), "no");
        }).build();
        assertThat(call(gated, operation("Orders.create", Tier.REVERSIBLE), "O:1", "O:1", null))
                .isEqualTo("receipt-1");
    }

    private List<String> concurrently(java.util.concurrent.Callable<String> task) throws Exception {
        List<Object> outcomes = concurrentlyCatching(task);
        List<String> results = new ArrayList<>();
        for (Object o : outcomes) {
            if (o instanceof Throwable t) {
                throw new AssertionError("a caller failed", t);
            }
            results.add((String) o);
        }
        return results;
    }

    /** Runs {@code task} on {@value #THREADS} threads released together; each result or exception. */
    private List<Object> concurrentlyCatching(java.util.concurrent.Callable<String> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Object>> futures = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    try {
                        return task.call();
                    } catch (RuntimeException e) {
                        return e;
                    }
                }));
            }
            List<Object> outcomes = new ArrayList<>();
            for (Future<Object> f : futures) {
                outcomes.add(f.get(30, TimeUnit.SECONDS));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }

    /** A clock the test moves. */
    static final class MutableClock extends Clock {
        private final AtomicReference<Instant> now;

        MutableClock(Instant start) {
            this.now = new AtomicReference<>(start);
        }

        void advance(Duration d) {
            now.updateAndGet(i -> i.plus(d));
        }

        @Override
        public Instant instant() {
            return now.get();
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    /** The store of a process that dies after the method ran and before its result was recorded. */
    static final class DiesBeforeRecording extends ForwardingStore {

        DiesBeforeRecording(IdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            throw new IllegalStateException("the process died");
        }

        @Override
        public boolean release(byte[] keyHash, Instant leaseUntil) {
            throw new IllegalStateException("the process died");
        }
    }
}
