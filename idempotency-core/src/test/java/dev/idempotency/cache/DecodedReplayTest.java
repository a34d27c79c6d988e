package dev.idempotency.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.cache.TestSupport.MutableClock;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * A replay answered by the pre-filter hands back a decoded value. For a type whose decoded values are immutable at
 * every depth, one decoded value serves the replays of the same cached outcome; for any other type, every replay is
 * decoded anew, so that what one caller changes never reaches another's replay.
 */
class DecodedReplayTest {

    enum Status { OPEN, PAID }

    record Money(long cents, String currency) {
    }

    record Receipt(long id, String orderNo, Money amount, Status status, Instant at, LocalDate day, UUID ref,
            int count, boolean paid) {
    }

    record Amount(long cents, String currency) {
    }

    record WithList(String id, List<String> lines) {
    }

    record WithArray(String id, int[] lines) {
    }

    record WithDecimal(BigDecimal amount) {
    }

    record Page<T>(T item) {
    }

    record Node(String name, @Nullable Node next) {
    }

    static final class Bean {
        public String name = "";
    }

    private final JacksonResultCodec codec = JacksonResultCodec.create();

    @Test
    void theCodecKnowsWhichTypesDecodeImmutable() {
        for (Type yes : List.<Type>of(String.class, long.class, Long.class, int.class, Status.class, Instant.class,
                UUID.class, Money.class, Receipt.class)) {
            assertThat(codec.decodesImmutable(yes)).as(yes.getTypeName()).isTrue();
        }
        for (Type no : List.<Type>of(Bean.class, WithList.class, WithArray.class, WithDecimal.class, BigDecimal.class,
                Node.class, Page.class, new ResultType<Page<String>>() { }.type(), new ResultType<List<String>>() { }
                        .type(), new ResultType<Optional<String>>() { }.type(), int[].class, Object.class, Void.class,
                void.class)) {
            assertThat(codec.decodesImmutable(no)).as(no.getTypeName()).isFalse();
        }
        assertThat(new ResultCodec() {
            @Override
            public byte[] encode(@Nullable Object value, Type declaredType) {
                return new byte[0];
            }

            @Override
            public @Nullable Object decode(byte[] data, Type declaredType) {
                return null;
            }
        }.decodesImmutable(String.class)).as("a codec that does not say").isFalse();
    }

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final CaffeinePrefilter prefilter = CaffeinePrefilter.wrap(store).clock(clock).build();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(prefilter).clock(clock).build();
    private final AtomicInteger runs = new AtomicInteger();

    private <T> T call(IdempotentOperation<T> op, String key, IdempotentExecutor.Action<T, RuntimeException> action) {
        return executor.execute(op, key, new Object[] {key}, action);
    }

    @Test
    void anImmutableOutcomeIsDecodedOncePerCachedRecord() {
        IdempotentOperation<Receipt> op = IdempotentOperation
                .builder("Orders.place", Tier.REVERSIBLE, ResultType.of(Receipt.class)).ttl("1h").build();
        IdempotentExecutor.Action<Receipt, RuntimeException> place = () -> new Receipt(runs.incrementAndGet(), "o-1",
                new Money(1999, "EUR"), Status.PAID, Instant.parse("2026-01-01T00:00:00.123456789Z"),
                LocalDate.of(2026, 1, 1), new UUID(1, 2), 3, true);

        Receipt original = call(op, "K-1", place);
        Receipt first = call(op, "K-1", place);
        Receipt second = call(op, "K-1", place);

        assertThat(runs).hasValue(1);
        assertThat(first).isEqualTo(original).isNotSameAs(original);
        assertThat(second).isSameAs(first);
        // another key's outcome is its own value
        Receipt other = call(op, "K-2", place);
        assertThat(call(op, "K-2", place)).isEqualTo(other).isNotEqualTo(first);
        assertThat(call(op, "K-1", place)).isEqualTo(original);

        // once the pre-filter forgets the outcome, the store answers and the value is decoded again
        prefilter.clear();
        Receipt fromStore = call(op, "K-1", place);
        assertThat(fromStore).isEqualTo(original).isNotSameAs(first);
        Receipt cachedAgain = call(op, "K-1", place);
        assertThat(cachedAgain).isEqualTo(original).isNotSameAs(first);
        assertThat(call(op, "K-1", place)).isSameAs(cachedAgain);
        assertThat(runs).hasValue(2);
    }

    @Test
    void aMutableOutcomeIsDecodedAnewForEveryReplay() {
        IdempotentOperation<WithList> op = IdempotentOperation
                .builder("Orders.lines", Tier.REVERSIBLE, ResultType.of(WithList.class)).ttl("1h").build();
        IdempotentExecutor.Action<WithList, RuntimeException> lines =
                () -> new WithList("o-" + runs.incrementAndGet(), new ArrayList<>(List.of("a", "b")));

        call(op, "K-1", lines);
        WithList first = call(op, "K-1", lines);
        first.lines().add("changed by the first caller");
        WithList second = call(op, "K-1", lines);

        assertThat(second).isNotSameAs(first);
        assertThat(second.lines()).containsExactly("a", "b");
        assertThat(runs).hasValue(1);
    }

    @Test
    void anOutcomeThatExpiresIsNotReplayedFromTheDecodedValue() {
        IdempotentOperation<Money> op = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Money.class)).ttl("1m").build();
        IdempotentExecutor.Action<Money, RuntimeException> money = () -> new Money(runs.incrementAndGet(), "EUR");

        call(op, "K-1", money);
        assertThat(call(op, "K-1", money)).isEqualTo(new Money(1, "EUR"));
        clock.advance(Duration.ofMinutes(2));
        assertThat(call(op, "K-1", money)).isEqualTo(new Money(2, "EUR"));
        assertThat(call(op, "K-1", money)).isEqualTo(new Money(2, "EUR"));
    }

    @Test
    void aValueDecodedAsOneTypeNeverAnswersForAnother() {
        IdempotentOperation<Money> asMoney = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Money.class)).ttl("1h").build();
        IdempotentOperation<Amount> asAmount = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Amount.class)).ttl("1h").build();
        call(asMoney, "K-1", () -> new Money(1, "EUR"));
        Money money = call(asMoney, "K-1", () -> null);
        assertThat(call(asMoney, "K-1", () -> null)).isSameAs(money);

        assertThat(call(asAmount, "K-1", () -> null)).isEqualTo(new Amount(1, "EUR"));
        assertThat(call(asMoney, "K-1", () -> null)).isEqualTo(money);
    }

    @Test
    void aLargeOutcomeIsDecodedForEveryReplay() {
        IdempotentOperation<Money> op = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Money.class)).ttl("1h").build();
        String atTheLimit = "x".repeat(4096 - "{\"cents\":1,\"currency\":\"\"}".length());
        call(op, "K-1", () -> new Money(1, atTheLimit));
        Money first = call(op, "K-1", () -> null);
        assertThat(call(op, "K-1", () -> null)).isSameAs(first);

        call(op, "K-2", () -> new Money(1, atTheLimit + "x"));
        Money large = call(op, "K-2", () -> null);
        assertThat(call(op, "K-2", () -> null)).isEqualTo(large).isNotSameAs(large);
    }

    @Test
    void anUnreadableCachedOutcomeFailsEveryTime() {
        IdempotentOperation<Money> written = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Money.class)).ttl("1h").build();
        IdempotentOperation<Receipt> readAsReceipt = IdempotentOperation
                .builder("Orders.money", Tier.REVERSIBLE, ResultType.of(Receipt.class)).ttl("1h").build();
        call(written, "K-1", () -> new Money(1, "EUR"));
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> call(readAsReceipt, "K-1", () -> null))
                    .isInstanceOf(IdempotencyReplayException.class);
        }
    }
}
