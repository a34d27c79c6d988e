package dev.idempotency.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.cache.TestSupport.MutableClock;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The pre-filter is bounded by bytes as well as by count (issue 16, item 2). */
class PrefilterMemoryTest {

    private static final String OP = "Reports.render";

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final AtomicInteger runs = new AtomicInteger();

    /** Keeps the rows but not their results, so that only the pre-filter holds the megabytes under test. */
    static final class ForgetfulStore extends ForwardingStore {
        ForgetfulStore() {
            super(new InMemoryIdempotencyStore());
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            return super.complete(keyHash, leaseUntil, new byte[] {'1'}, expiresAt);
        }
    }

    private IdempotentExecutor executor(IdempotencyStore store) {
        return IdempotentExecutor.builder(store).clock(clock).build();
    }

    private void record(IdempotentExecutor executor, IdempotentOperation<String> op, int calls, int resultChars) {
        String result = "x".repeat(resultChars);
        for (int i = 0; i < calls; i++) {
            executor.execute(op, "R-" + i, new Object[] {i}, () -> {
                runs.incrementAndGet();
                return result;
            });
        }
    }

    @Test
    void byDefaultMegabyteResultsFillA64MiBBudgetNotTheCount() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(new ForgetfulStore()).clock(clock).build();
        IdempotentOperation<String> render = IdempotentOperation
                .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).build();
        record(executor(prefilter), render, 90, 1_000_000);
        prefilter.cleanUp();

        assertThat(runs).hasValue(90);
        assertThat(CaffeinePrefilter.Builder.DEFAULT_MAXIMUM_BYTES).isEqualTo(64L << 20);
        assertThat(prefilter.cachedBytes()).isLessThanOrEqualTo(64L << 20);
        // each weighs its megabyte: at most 67 fit, where the count alone (10,000) would have kept all 90
        assertThat(prefilter.cachedOutcomes()).isBetween(50L, 67L);
    }

    @Test
    void anExplicitByteBudgetIsHeld() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(new ForgetfulStore()).clock(clock)
                .maximumBytes(1_000_000).build();
        IdempotentOperation<String> render = IdempotentOperation
                .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).build();
        record(executor(prefilter), render, 100, 100_000);
        prefilter.cleanUp();

        assertThat(prefilter.cachedBytes()).isLessThanOrEqualTo(1_000_000);
        assertThat(prefilter.cachedOutcomes()).isBetween(5L, 9L);
    }

    @Test
    void smallOutcomesAreStillBoundedByTheCount() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(new ForgetfulStore()).clock(clock)
                .maximumSize(10).build();
        IdempotentOperation<String> render = IdempotentOperation
                .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).build();
        record(executor(prefilter), render, 30, 10);
        prefilter.cleanUp();

        assertThat(prefilter.cachedOutcomes()).isEqualTo(10);
    }

    @Test
    void anEntryIsWeighedByItsResultKeyAndOverhead() {
        IdempotentOperation<String> render = IdempotentOperation
                .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).build();
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(new ForgetfulStore()).clock(clock)
                .maximumSize(1_000_000).build();
        executor(prefilter).execute(render, "R-1", new Object[0], () -> "x".repeat(998));
        // 1,000 bytes of JSON, "R-1" and "Reports.render" as UTF-16, and the fixed overhead
        assertThat(prefilter.cachedBytes()).isEqualTo(1_000 + 2 * 3 + 2 * OP.length()
                + CaffeinePrefilter.ENTRY_OVERHEAD_BYTES);
    }

    @Test
    void anOutcomeLargerThanTheWholeBudgetIsNotKept() {
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(new ForgetfulStore()).clock(clock)
                .maximumBytes(10_000).build();
        IdempotentOperation<String> render = IdempotentOperation
                .builder(OP, Tier.REVERSIBLE, ResultType.of(String.class)).build();
        record(executor(prefilter), render, 1, 20_000);
        prefilter.cleanUp();
        assertThat(prefilter.cachedOutcomes()).isZero();
    }

    @Test
    void theBudgetMustBePositive() {
        assertThatThrownBy(() -> CaffeinePrefilter.wrap(new ForgetfulStore()).maximumBytes(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maximumBytes");
    }
}
