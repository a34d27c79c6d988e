package dev.idempotency.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MicrometerIdempotencyListenerTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final AtomicInteger runs = new AtomicInteger();

    private final IdempotentOperation<String> create = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class))
            .lockTimeout(Duration.ofMillis(30)).build();
    private final IdempotentOperation<String> pay = IdempotentOperation
            .builder("Payments.pay", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();

    private double calls(String operation, String tier, String outcome) {
        Counter c = registry.find("idempotency.calls")
                .tags("operation", operation, "tier", tier, "outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void theMetersCountAScriptedSequenceOfCalls() {
        // a clock that stands still: the first attempt's lease never runs out while its duplicate waits
        Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(prefilter).clock(clock)
                .listener(new MicrometerIdempotencyListener(registry)).build();

        executor.execute(create, "K1", new Object[] {"a"}, () -> "order-" + runs.incrementAndGet()); // executed
        executor.execute(create, "K1", new Object[] {"a"}, () -> "never");                          // cached
        executor.execute(create, "K1", new Object[] {"a"}, () -> "never");                          // cached
        prefilter.clear();
        executor.execute(create, "K1", new Object[] {"a"}, () -> "never");                          // from store
        assertThatThrownBy(() -> executor.execute(create, "K1", new Object[] {"b"}, () -> "never"))
                .isInstanceOf(IdempotencyKeyReusedException.class);
        assertThatThrownBy(() -> executor.execute(create, "K2", new Object[] {"a"}, () -> {
            throw new IllegalStateException("the method failed");
        })).hasMessage("the method failed");
        assertThatThrownBy(() -> executor.execute(create, " ", new Object[] {"a"}, () -> "never"))
                .isInstanceOf(IdempotencyKeyException.class);
        // a duplicate arriving while the first attempt is still running waits its lock timeout, then gives up
        executor.execute(create, "K3", new Object[] {"a"}, () -> {
            assertThatThrownBy(() -> executor.execute(create, "K3", new Object[] {"a"}, () -> "never"))
                    .isInstanceOf(IdempotencyInProgressException.class);
            return "order-" + runs.incrementAndGet();
        });

        assertThat(calls("Orders.create", "reversible", "executed")).isEqualTo(2);
        assertThat(calls("Orders.create", "reversible", "replayed_cached")).isEqualTo(2);
        assertThat(calls("Orders.create", "reversible", "replayed")).isEqualTo(1);
        assertThat(calls("Orders.create", "reversible", "key_reused")).isEqualTo(1);
        assertThat(calls("Orders.create", "reversible", "failed")).isEqualTo(2);
        assertThat(calls("Orders.create", "reversible", "in_progress")).isEqualTo(1);
        assertThat(registry.find("idempotency.calls").counters()).hasSize(6);
        assertThat(runs).hasValue(2);

        Timer claim = registry.find("idempotency.claim").tags("operation", "Orders.create").timer();
        assertThat(claim).isNotNull();
        assertThat(claim.count()).as("every call that claimed; not the one refused for its blank key").isEqualTo(8);
        assertThat(registry.find("idempotency.claim").timers()).hasSize(1);

        // the same calls as duplicates intercepted: three replays, one refusal, one in flight; nothing else
        assertThat(duplicates("Orders.create", "replayed")).isEqualTo(3);
        assertThat(duplicates("Orders.create", "refused")).isEqualTo(1);
        assertThat(duplicates("Orders.create", "in_flight")).isEqualTo(1);
        assertThat(registry.find("idempotency.duplicates").counters()).hasSize(3);
    }

    private double duplicates(String operation, String outcome) {
        Counter c = registry.find("idempotency.duplicates").tags("operation", operation, "outcome", outcome)
                .counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void eachPurgeRunIsCountedWithWhatItDeletedAndTheLastSuccessIsKept() {
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(registry);
        listener.purged(120, Instant.ofEpochSecond(1_000), null);
        listener.purged(0, Instant.ofEpochSecond(2_000), null);
        listener.purged(7, Instant.ofEpochSecond(3_000), new IllegalStateException("connection refused"));

        assertThat(registry.get("idempotency.purge.deleted").counter().count()).isEqualTo(127);
        assertThat(registry.get("idempotency.purge.runs").tag("result", "success").counter().count()).isEqualTo(2);
        assertThat(registry.get("idempotency.purge.runs").tag("result", "failure").counter().count()).isEqualTo(1);
        assertThat(registry.get("idempotency.purge.last.success").gauge().value()).isEqualTo(2_000);
    }

    @Test
    void irreversibleOutcomesAreCountedUnderTheirTier() {
        MutableClock clock = new MutableClock();
        MicrometerIdempotencyListener listener = new MicrometerIdempotencyListener(registry);
        IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(clock).listener(listener).build();
        IdempotentExecutor gated = IdempotentExecutor.builder(store).clock(clock).listener(listener)
                .confirmationGate(call -> {
                    throw new ConfirmationRequiredException(call.operation(), call.key(), "confirm the payment");
                }).build();

        assertThatThrownBy(() -> gated.execute(pay, "P1", new Object[] {10}, () -> "paid"))
                .isInstanceOf(ConfirmationRequiredException.class);
        // an attempt whose lease runs out while it runs is, to a duplicate, a crash with an unknown outcome
        assertThatThrownBy(() -> executor.execute(pay, "P2", new Object[] {10}, () -> {
            clock.advance(pay.lease().plusSeconds(1));
            assertThatThrownBy(() -> executor.execute(pay, "P2", new Object[] {10}, () -> "never"))
                    .isInstanceOf(IdempotencyOutcomeUnknownException.class);
            return "paid";
        })).isInstanceOf(dev.idempotency.IdempotencyStoreException.class);

        assertThat(calls("Payments.pay", "irreversible", "confirmation_required")).isEqualTo(1);
        assertThat(calls("Payments.pay", "irreversible", "outcome_unknown")).isEqualTo(1);
        assertThat(calls("Payments.pay", "irreversible", "failed")).isEqualTo(1);
    }

    private static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
