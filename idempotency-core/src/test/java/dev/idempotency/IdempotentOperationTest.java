package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** What IdempotentOperation.Builder accepts, what it refuses, and the defaults a user gets. */
class IdempotentOperationTest {

    private static IdempotentOperation.Builder<String> op(Tier tier) {
        return IdempotentOperation.builder("Orders.create", tier, ResultType.of(String.class));
    }

    @Test
    void theDefaults() {
        IdempotentOperation<String> o = op(Tier.REVERSIBLE).build();
        assertThat(o.ttl()).isEqualTo(Duration.ofHours(24));
        assertThat(o.lockTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.maxResultBytes()).isEqualTo(1 << 20);
        assertThat(o.description()).isEqualTo("Orders.create");
        assertThat(o.replayExceptions()).isEmpty();
        assertThat(o.releaseOn()).isEmpty();
        assertThat(o).hasToString("IdempotentOperation[Orders.create, REVERSIBLE, ttl=PT24H, lockTimeout=PT10S]");
    }

    @Test
    void durationsMustBePositiveNamingTheOperation() {
        assertThatThrownBy(() -> op(Tier.REVERSIBLE).ttl(Duration.ZERO).build())
                .hasMessageContaining("ttl of Orders.create must be positive");
        assertThatThrownBy(() -> op(Tier.REVERSIBLE).lockTimeout(Duration.ofSeconds(-1)).build())
                .hasMessageContaining("lockTimeout of Orders.create must be positive");
        assertThatThrownBy(() -> op(Tier.REVERSIBLE).lease(Duration.ZERO).build())
                .hasMessageContaining("lease of Orders.create must be positive");
        assertThat(op(Tier.REVERSIBLE).lease("").build().lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(op(Tier.REVERSIBLE).lease("2m").build().lease()).isEqualTo(Duration.ofMinutes(2));
        assertThat(op(Tier.REVERSIBLE).lockTimeout("1s").build().lease()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void ignoredArgumentsMayBeGivenInAnyOrder() {
        IdempotentOperation<String> o = op(Tier.REVERSIBLE).ignoredArguments(4, 0, 2).build();
        assertThat(o.isIgnored(0)).isTrue();
        assertThat(o.isIgnored(2)).isTrue();
        assertThat(o.isIgnored(4)).isTrue();
        assertThat(o.isIgnored(1)).isFalse();
        assertThat(o.isIgnored(3)).isFalse();
    }

    public static class NothingHappened extends RuntimeException {
        public NothingHappened(String message) {
            super(message);
        }
    }

    public static class Declined extends RuntimeException {
        public Declined(String message) {
            super(message);
        }
    }

    @Test
    void releaseOnNeedsAnIrreversibleTierAndNarrowExceptions() {
        IdempotentOperation<String> o = op(Tier.IRREVERSIBLE).releaseOn(NothingHappened.class).build();
        assertThat(o.releaseOn()).containsExactly(NothingHappened.class);
        assertThat(o.releases(new NothingHappened("x"))).isTrue();
        assertThat(o.releases(new IllegalStateException("x"))).isFalse();

        assertThatThrownBy(() -> op(Tier.REVERSIBLE).releaseOn(NothingHappened.class).build())
                .hasMessageContaining("needs tier = IRREVERSIBLE");
        for (Class<? extends Throwable> broad : java.util.List.<Class<? extends Throwable>>of(Throwable.class,
                Exception.class, RuntimeException.class, Error.class)) {
            assertThatThrownBy(() -> op(Tier.IRREVERSIBLE).releaseOn(broad).build()).as(broad.getName())
                    .hasMessageContaining("is too broad");
        }
        assertThat(op(Tier.IRREVERSIBLE).releaseOn(TimeoutException.class).build().releaseOn())
                .containsExactly(TimeoutException.class);
    }

    @Test
    void replayExceptionsAreKeptAndTheMostSpecificMatchWins() {
        IdempotentOperation<String> o = op(Tier.REVERSIBLE).replayExceptions(Declined.class).build();
        assertThat(o.replayExceptions()).containsExactly(Declined.class);
        assertThat(o.recordedAs(new Declined("no"))).isEqualTo(Declined.class);
        assertThat(o.recordedAs(new NothingHappened("x"))).isNull();
        assertThat(o.replayExceptionNamed(Declined.class.getName())).isEqualTo(Declined.class);
        assertThat(o.replayExceptionNamed("java.lang.Runtime")).isNull();
    }
}
