package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.TierRulesTest.MutableClock;
import dev.idempotency.TransactionBridge.Completion;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.CircuitBreakerStore;
import dev.idempotency.store.CircuitBreakerStore.State;
import dev.idempotency.store.CircuitOpenException;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreDown} and {@link CircuitBreakerStore}: what a call does when its store is unavailable. The outage is a
 * store switched down (every call throws, as a refused connection does); the cool-down passes on an injected clock.
 */
class StoreDownTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T10:00:00Z"));
    private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
    private final Switchable database = new Switchable(memory);
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private final List<String> transitions = new CopyOnWriteArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicInteger compensations = new AtomicInteger();

    private static final IdempotentOperation<String> FAILING = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).build();
    private static final IdempotentOperation<String> UNGUARDED = IdempotentOperation
            .builder("Carts.add", Tier.REVERSIBLE, ResultType.of(String.class))
            .onStoreDown(StoreDown.PROCEED_UNGUARDED).compensated(true).build();

    private IdempotentExecutor executor(IdempotencyStore store) {
        return IdempotentExecutor.builder(store).clock(clock).listener(events::add).build();
    }

    private String call(IdempotentExecutor executor, IdempotentOperation<String> op, String key) {
        IdempotentExecutor.Compensation<String> undo = op.onStoreDown() == StoreDown.PROCEED_UNGUARDED
                ? r -> compensations.incrementAndGet() : null;
        return executor.execute(op, key, new Object[] {key}, () -> "run-" + runs.incrementAndGet(), undo);
    }

    private List<Outcome> outcomes() {
        return events.stream().map(IdempotencyEvent::outcome).toList();
    }

    @Test
    void byDefaultAStoreDownFailsTheCallBeforeTheMethodRuns() {
        IdempotentExecutor executor = executor(database);
        database.down = true;

        assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("Orders.create").hasMessageContaining("the method did not run")
                .satisfies(e -> assertThat(((IdempotencyStoreException) e).methodRan()).isFalse());
        assertThat(runs).hasValue(0);
        assertThat(outcomes()).containsExactly(Outcome.FAILED);
    }

    @Test
    void proceedUnguardedRunsTheMethodWithoutItsKeyAndRecordsNothing() {
        IdempotentExecutor executor = executor(database);
        database.down = true;

        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-1");
        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-2");
        database.down = false;

        // nothing was recorded: the first call after the outage runs again, then the key protects it
        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-3");
        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-3");
        assertThat(outcomes()).containsExactly(Outcome.UNGUARDED, Outcome.UNGUARDED, Outcome.EXECUTED,
                Outcome.REPLAYED);
        assertThat(Outcome.UNGUARDED.tagValue()).isEqualTo("unguarded");
    }

    @Test
    void proceedUnguardedReturnsTheResultWhenOnlyTheRecordFails() {
        IdempotentExecutor executor = executor(database);
        database.failComplete = true;

        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-1");
        assertThat(outcomes()).containsExactly(Outcome.UNGUARDED);
    }

    @Test
    void aFailingRecordFailsTheCallByDefaultAndSaysTheMethodRan() {
        IdempotentExecutor executor = executor(database);
        database.failComplete = true;

        assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class)
                .satisfies(e -> assertThat(((IdempotencyStoreException) e).methodRan()).isTrue());
        assertThat(runs).hasValue(1);
    }

    @Test
    void anUnguardedCallIsCompensatedWhenItsTransactionRollsBack() {
        TransactionEdgesTest.Transaction tx = new TransactionEdgesTest.Transaction();
        IdempotentExecutor executor = IdempotentExecutor.builder(database).clock(clock).transactions(tx)
                .listener(events::add).build();
        database.down = true;
        tx.begin();
        assertThat(call(executor, UNGUARDED, "K-1")).isEqualTo("run-1");
        tx.end(Completion.ROLLED_BACK);

        assertThat(compensations).hasValue(1);
    }

    @Test
    void answersOfTheLibraryAreNotAnOutage() {
        IdempotentExecutor executor = executor(database);
        call(executor, UNGUARDED, "K-1");
        // the same key with other arguments is refused as always, never run unguarded
        assertThatThrownBy(() -> executor.execute(UNGUARDED, "K-1", new Object[] {"other"}, () -> "x",
                r -> { })).isInstanceOf(IdempotencyKeyReusedException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void proceedUnguardedIsRefusedWhereItCouldActTwiceWithoutRemedy() {
        assertThatThrownBy(() -> IdempotentOperation.builder("Payouts.send", Tier.IRREVERSIBLE,
                ResultType.of(String.class)).onStoreDown(StoreDown.PROCEED_UNGUARDED).compensated(true).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Payouts.send")
                .hasMessageContaining("an irreversible call always fails");
        assertThatThrownBy(() -> IdempotentOperation.builder("Carts.add", Tier.REVERSIBLE,
                ResultType.of(String.class)).onStoreDown(StoreDown.PROCEED_UNGUARDED).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no compensation");
        IdempotentExecutor executor = executor(database);
        assertThatThrownBy(() -> executor.execute(UNGUARDED, "K-1", new Object[0], () -> "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a compensation");
        assertThat(events).isEmpty();
    }

    @Test
    void theBreakerOpensAfterConsecutiveFailuresAndThenFailsFastWithoutTheStore() {
        CircuitBreakerStore breaker = breaker(database);
        IdempotentExecutor executor = executor(breaker);
        database.down = true;

        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class);
        }
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        int touched = database.calls.get();

        assertThatThrownBy(() -> call(executor, FAILING, "K-2")).isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("its circuit is open").hasMessageContaining("the method did not run")
                .hasRootCauseInstanceOf(RuntimeException.class)
                .satisfies(e -> assertThat(e.getCause()).isInstanceOf(CircuitOpenException.class));
        assertThat(call(executor, UNGUARDED, "K-3")).isEqualTo("run-1");
        assertThat(database.calls).hasValue(touched);
        assertThat(transitions).containsExactly("CLOSED->OPEN");
    }

    @Test
    void afterTheCoolDownOneTrialClosesTheCircuitOrOpensItAgain() {
        CircuitBreakerStore breaker = breaker(database);
        IdempotentExecutor executor = executor(breaker);
        database.down = true;
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class);
        }
        clock.advance(Duration.ofSeconds(30));
        assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.openings()).isEqualTo(2);

        database.down = false;
        assertThatThrownBy(() -> call(executor, FAILING, "K-1")).hasCauseInstanceOf(CircuitOpenException.class);
        clock.advance(Duration.ofSeconds(30));
        assertThat(call(executor, FAILING, "K-1")).isEqualTo("run-1");
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN",
                "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
    }

    @Test
    void aSuccessBetweenFailuresKeepsTheCircuitClosed() {
        CircuitBreakerStore breaker = breaker(database);
        IdempotentExecutor executor = executor(breaker);
        for (int i = 0; i < 5; i++) {
            database.down = true;
            assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class);
            assertThatThrownBy(() -> call(executor, FAILING, "K-1")).isInstanceOf(IdempotencyStoreException.class);
            database.down = false;
            call(executor, FAILING, "K-" + i);
        }
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(transitions).isEmpty();
    }

    @Test
    void aCachedOutcomeKeepsReplayingWhileTheCircuitIsOpen() {
        CircuitBreakerStore breaker = breaker(database);
        IdempotencyStore store = CaffeinePrefilter.wrap(breaker).clock(clock).build();
        IdempotentExecutor executor = executor(store);
        assertThat(call(executor, FAILING, "K-1")).isEqualTo("run-1");
        database.down = true;
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> call(executor, FAILING, "K-2")).isInstanceOf(IdempotencyStoreException.class);
        }
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        events.clear();

        assertThat(call(executor, FAILING, "K-1")).isEqualTo("run-1");
        assertThatThrownBy(() -> call(executor, FAILING, "K-3")).hasCauseInstanceOf(CircuitOpenException.class);
        assertThat(outcomes()).containsExactly(Outcome.REPLAYED_CACHED, Outcome.FAILED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void theWritesOfAClaimAlreadyHeldGoThroughAnOpenCircuit() {
        CircuitBreakerStore breaker = breaker(database);
        IdempotentExecutor executor = executor(breaker);
        IdempotentExecutor other = executor(breaker);
        String result = executor.execute(FAILING, "K-1", new Object[] {"K-1"}, () -> {
            // while this call runs, the store fails three times for others and the circuit opens
            database.down = true;
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> call(other, FAILING, "K-2")).isInstanceOf(IdempotencyStoreException.class);
            }
            database.down = false;
            return "ran";
        });
        assertThat(result).isEqualTo("ran");
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(memory.find(Keys.hash(FAILING.name(), "", "K-1"))).get()
                .extracting(r -> r.status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    @Test
    void theCircuitAndTheUnguardedRunsAreMetered() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        dev.idempotency.metrics.MicrometerIdempotencyListener metrics =
                new dev.idempotency.metrics.MicrometerIdempotencyListener(registry);
        CircuitBreakerStore breaker = CircuitBreakerStore.wrap(database).failureThreshold(1).clock(clock)
                .listener(metrics).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(breaker).clock(clock).listener(metrics).build();
        database.down = true;
        call(executor, UNGUARDED, "K-1");
        call(executor, UNGUARDED, "K-2");

        assertThat(registry.get("idempotency.store.circuit.state").gauge().value()).isEqualTo(2.0);
        assertThat(registry.get("idempotency.store.circuit.transitions").tag("state", "open").counter().count())
                .isEqualTo(1.0);
        assertThat(registry.get("idempotency.calls").tag("outcome", "unguarded").counter().count()).isEqualTo(2.0);
        database.down = false;
        clock.advance(Duration.ofSeconds(11));
        call(executor, UNGUARDED, "K-3");
        assertThat(registry.get("idempotency.store.circuit.state").gauge().value()).isEqualTo(0.0);
    }

    @Test
    void anUnguardedOperationIsLoggedOncePerOpeningOfTheCircuitNotOncePerCall() {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(IdempotentExecutor.class.getName());
        List<String> warnings = new CopyOnWriteArrayList<>();
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getLevel() == java.util.logging.Level.WARNING && record.getMessage().contains("UNGUARDED")) {
                    warnings.add(record.getMessage());
                }
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
            CircuitBreakerStore breaker = CircuitBreakerStore.wrap(database).failureThreshold(1).clock(clock).build();
            IdempotentExecutor executor = executor(breaker);
            database.down = true;
            for (int i = 0; i < 20; i++) {
                call(executor, UNGUARDED, "K-" + i);
            }
            assertThat(warnings).singleElement().satisfies(w -> assertThat(w).startsWith("Carts.add runs UNGUARDED"));
            int firstOutage = warnings.size();
            clock.advance(Duration.ofSeconds(11)); // the trial fails: the circuit opens a second time
            for (int i = 0; i < 20; i++) {
                call(executor, UNGUARDED, "L-" + i);
            }
            assertThat(breaker.openings()).isEqualTo(2);
            assertThat(warnings).hasSize(firstOutage + 1);
            assertThat(runs).hasValue(40);
        } finally {
            logger.removeHandler(handler);
        }
    }

    private CircuitBreakerStore breaker(IdempotencyStore store) {
        return CircuitBreakerStore.wrap(store).failureThreshold(3).openFor(Duration.ofSeconds(10)).clock(clock)
                .listener((from, to, cause) -> transitions.add(from + "->" + to)).build();
    }

    /** A store that can be switched down: every call then throws, as a refused connection does. */
    static final class Switchable extends ForwardingStore {
        volatile boolean down;
        volatile boolean failComplete;
        final AtomicInteger calls = new AtomicInteger();

        Switchable(IdempotencyStore delegate) {
            super(delegate);
        }

        private void touch() {
            calls.incrementAndGet();
            if (down) {
                throw new IllegalStateException("Connection refused");
            }
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            touch();
            return super.claim(request);
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            touch();
            if (failComplete) {
                throw new IllegalStateException("Connection reset");
            }
            return super.complete(keyHash, leaseUntil, result, expiresAt);
        }

        @Override
        public boolean release(byte[] keyHash, Instant leaseUntil) {
            touch();
            return super.release(keyHash, leaseUntil);
        }
    }
}
