package dev.idempotency.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotencyObserver;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.cache.TestSupport.CountingStore;
import dev.idempotency.cache.TestSupport.MutableClock;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotentExecutor#replayHeldOr}: what a way in asks before it begins the method's transaction. It answers a
 * call only from an outcome the pre-filter holds for the same key and arguments; everything else runs the rest of the
 * call, unjudged and unpublished, for {@code execute} to decide further in.
 */
class ReplayHeldTest {

    private static final String OTHERWISE = "the rest of the call";

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final CountingStore store = new CountingStore(new InMemoryIdempotencyStore());
    private final List<Outcome> outcomes = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicInteger otherwise = new AtomicInteger();
    private final AtomicInteger observed = new AtomicInteger();
    private final IdempotentOperation<String> create = operation("Orders.create", Tier.REVERSIBLE).ttl("1h").build();

    private static IdempotentOperation.Builder<String> operation(String name, Tier tier) {
        return IdempotentOperation.builder(name, tier, ResultType.of(String.class));
    }

    private IdempotentExecutor executor(IdempotencyStore s, TransactionBridge tx, IdempotencyScope scope) {
        IdempotencyObserver counting = new IdempotencyObserver() {
            @Override
            public <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation)
                    throws E {
                observed.incrementAndGet();
                return invocation.proceed();
            }
        };
        return IdempotentExecutor.builder(s).clock(clock).transactions(tx).scope(scope).observer(counting)
                .listener((IdempotencyEvent e) -> outcomes.add(e.outcome())).build();
    }

    private IdempotentExecutor withPrefilter() {
        return executor(CaffeinePrefilter.wrap(store).clock(clock).build(), TransactionBridge.NONE,
                IdempotencyScope.NONE);
    }

    private String execute(IdempotentExecutor executor, String key, String argument) {
        return executor.execute(create, key, new Object[] {argument}, () -> "order-" + runs.incrementAndGet());
    }

    private String replayHeldOr(IdempotentExecutor executor, IdempotentOperation<String> op, String key,
            String argument) {
        return executor.replayHeldOr(op, key, new Object[] {argument}, () -> {
            otherwise.incrementAndGet();
            return OTHERWISE;
        });
    }

    /** Records the outcome of key K1 with argument "a", then forgets what that published and touched. */
    private IdempotentExecutor withK1Held() {
        IdempotentExecutor executor = withPrefilter();
        assertThat(execute(executor, "K1", "a")).isEqualTo("order-1");
        outcomes.clear();
        observed.set(0);
        store.reset();
        return executor;
    }

    @Test
    void aHeldOutcomeIsReplayedAsExecuteWouldReplayIt() {
        IdempotentExecutor executor = withK1Held();
        assertThat(executor.holdsOutcomesInMemory()).isTrue();

        assertThat(replayHeldOr(executor, create, "K1", "a")).isEqualTo("order-1");
        assertThat(replayHeldOr(executor, create, "K1", "a")).isEqualTo("order-1");

        assertThat(otherwise).hasValue(0);
        assertThat(runs).hasValue(1);
        assertThat(store.calls).hasValue(0);
        assertThat(outcomes).containsExactly(Outcome.REPLAYED_CACHED, Outcome.REPLAYED_CACHED);
        assertThat(observed).as("observed calls").hasValue(2);
    }

    @Test
    void theKeyIsNormalizedAsExecuteNormalizesIt() {
        IdempotentExecutor executor = withPrefilter();
        assertThat(execute(executor, "K\u00e9", "a")).isEqualTo("order-1");

        // the same key in decomposed form: NFC makes it the one recorded
        assertThat(replayHeldOr(executor, create, "Ke\u0301", "a")).isEqualTo("order-1");
        assertThat(otherwise).hasValue(0);
    }

    @Test
    void aKeyThePrefilterDoesNotHoldRunsTheRestOfTheCallOnly() {
        IdempotentExecutor executor = withK1Held();

        assertThat(replayHeldOr(executor, create, "K2", "a")).isEqualTo(OTHERWISE);

        assertThat(otherwise).hasValue(1);
        assertThat(store.calls).as("nothing claimed here").hasValue(0);
        assertThat(outcomes).isEmpty();
        assertThat(observed).hasValue(0);
    }

    @Test
    void otherArgumentsAreLeftForTheCallToRefuseFurtherIn() {
        IdempotentExecutor executor = withK1Held();

        assertThat(replayHeldOr(executor, create, "K1", "b")).isEqualTo(OTHERWISE);

        assertThat(otherwise).hasValue(1);
        assertThat(outcomes).isEmpty();
    }

    @Test
    void aRefusedKeyIsLeftForTheCallToRefuseFurtherIn() {
        IdempotentExecutor executor = withK1Held();

        assertThat(replayHeldOr(executor, create, " ", "a")).isEqualTo(OTHERWISE);
        assertThat(replayHeldOr(executor, create, "K1\u0000", "a")).isEqualTo(OTHERWISE);
        assertThat(replayHeldOr(executor, create, null, "a")).isEqualTo(OTHERWISE);

        assertThat(otherwise).hasValue(3);
        assertThat(outcomes).isEmpty();
        assertThat(observed).hasValue(0);
    }

    @Test
    void anotherOperationOfTheSameKeyIsNotHeld() {
        IdempotentExecutor executor = withK1Held();
        IdempotentOperation<String> other = operation("Orders.cancel", Tier.REVERSIBLE).build();

        assertThat(replayHeldOr(executor, other, "K1", "a")).isEqualTo(OTHERWISE);
        assertThat(otherwise).hasValue(1);
    }

    @Test
    void aReadOnlyOperationIsNeverAnswered() {
        IdempotentExecutor executor = withK1Held();
        IdempotentOperation<String> read = operation("Orders.create", Tier.READ_ONLY).build();

        assertThat(replayHeldOr(executor, read, "K1", "a")).isEqualTo(OTHERWISE);
        assertThat(otherwise).hasValue(1);
        assertThat(outcomes).isEmpty();
    }

    @Test
    void insideAReadOnlyTransactionTheCallIsLeftToExecute() {
        TransactionBridge readOnly = new TransactionBridge() {
            @Override
            public boolean isTransactionActive() {
                return true;
            }

            @Override
            public boolean isReadOnly() {
                return true;
            }

            @Override
            public void afterCompletion(CompletionCallback callback) {
            }
        };
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        assertThat(execute(executor(prefilter, TransactionBridge.NONE, IdempotencyScope.NONE), "K1", "a"))
                .isEqualTo("order-1");

        IdempotentExecutor inReadOnly = executor(prefilter, readOnly, IdempotencyScope.NONE);
        outcomes.clear();
        assertThat(replayHeldOr(inReadOnly, create, "K1", "a")).isEqualTo(OTHERWISE);
        assertThat(outcomes).isEmpty();
    }

    @Test
    void aScopeThatSaysNothingIsLeftForTheCallToRefuseFurtherIn() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        IdempotentExecutor executor = executor(prefilter, TransactionBridge.NONE, () -> null);

        assertThat(replayHeldOr(executor, create, "K1", "a")).isEqualTo(OTHERWISE);
        assertThat(outcomes).isEmpty();
    }

    @Test
    void aScopeIsPartOfTheKey() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        assertThat(execute(executor(prefilter, TransactionBridge.NONE, () -> "tenant-a"), "K1", "a"))
                .isEqualTo("order-1");

        assertThat(replayHeldOr(executor(prefilter, TransactionBridge.NONE, () -> "tenant-b"), create, "K1", "a"))
                .isEqualTo(OTHERWISE);
        assertThat(replayHeldOr(executor(prefilter, TransactionBridge.NONE, () -> "tenant-a"), create, "K1", "a"))
                .isEqualTo("order-1");
        assertThat(otherwise).hasValue(1);
    }

    @Test
    void withoutAPrefilterEveryCallRunsTheRestOfTheCall() {
        IdempotentExecutor executor = executor(store, TransactionBridge.NONE, IdempotencyScope.NONE);
        assertThat(executor.holdsOutcomesInMemory()).isFalse();
        execute(executor, "K1", "a");
        outcomes.clear();

        assertThat(replayHeldOr(executor, create, "K1", "a")).isEqualTo(OTHERWISE);
        assertThat(otherwise).hasValue(1);
        assertThat(outcomes).isEmpty();
    }
}
