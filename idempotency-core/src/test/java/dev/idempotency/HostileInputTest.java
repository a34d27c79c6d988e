package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile keys and scopes through the executor: each is refused with its documented exception, the method does not
 * run, and the store holds exactly what it held before.
 */
class HostileInputTest {

    static final IdempotentOperation<String> OP = IdempotentOperation
            .builder("Refunds.issue", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();

    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final List<Outcome> outcomes = new ArrayList<>();
    final AtomicInteger runs = new AtomicInteger();
    final ThreadLocal<String> tenant = ThreadLocal.withInitial(() -> "tenant-a");
    final IdempotentExecutor executor = IdempotentExecutor.builder(store)
            .scope(tenant::get)
            .listener(e -> outcomes.add(e.outcome()))
            .build();
    IdempotencyRecord existing;

    @BeforeEach
    void oneRecordAlreadyStored() {
        executor.execute(OP, "existing", new Object[0], () -> "earlier");
        existing = store.find(Keys.hash(OP.name(), "tenant-a", "existing")).orElseThrow();
        outcomes.clear();
    }

    private String refund() {
        runs.incrementAndGet();
        return "refunded";
    }

    private void assertNothingHappened() {
        assertThat(runs).as("the method did not run").hasValue(0);
        assertThat(store.size()).as("the store is unchanged").isEqualTo(1);
        assertThat(store.find(existing.keyHash())).contains(existing);
        assertThat(outcomes).containsExactly(Outcome.FAILED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\u3000", "line\nbreak", "nul\u0000", "esc\u001b[31m", "del\u007f",
            "next-line\u0085", "sep\u2028", "lone\ud800", "\udfffback"})
    void aHostileKeyIsAKeyExceptionNamingTheOperation(String key) {
        assertThatThrownBy(() -> executor.execute(OP, key, new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("Refunds.issue");
        assertNothingHappened();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ORDER-1\nINFO payment approved for ORDER-2", "bidi\u202eevil", "zw\u200bsp",
            "lone\ud800", "o\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301"
                    + "\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301"
                    + "\u0301\u0301\u0301"})
    void aRefusedKeyReachesListenersAndTheMessageEscapedNeverRaw(String key) {
        List<IdempotencyEvent> events = new ArrayList<>();
        IdempotentExecutor listened = IdempotentExecutor.builder(store).listener(events::add).build();
        assertThatThrownBy(() -> listened.execute(OP, key, new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n", "\u202e", "\u200b", "\ud800"));
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(e.key()).doesNotContain("\n", "\u202e", "\u200b", "\ud800");
            assertThat(e.key().codePoints().noneMatch(cp -> Character.getType(cp) == Character.FORMAT
                    || Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE)).isTrue();
        });
        assertThat(runs).hasValue(0);
        if (key.startsWith("ORDER-1")) {
            assertThat(events.get(0).key()).isEqualTo("ORDER-1\\u000AINFO payment approved for ORDER-2");
        }
    }

    @Test
    void anEventBuiltByAnyoneEscapesItsKey() {
        IdempotencyEvent event = new IdempotencyEvent("Op", Tier.REVERSIBLE, "a\r\nb", Outcome.FAILED,
                java.time.Duration.ZERO, java.time.Duration.ZERO);
        assertThat(event.key()).isEqualTo("a\\u000D\\u000Ab");
        IdempotencyEvent plain = new IdempotencyEvent("Op", Tier.REVERSIBLE, "caf\u00e9", Outcome.EXECUTED,
                java.time.Duration.ZERO, java.time.Duration.ZERO);
        assertThat(plain.key()).isEqualTo("caf\u00e9");
    }

    @Test
    void aNullKeyIsAKeyException() {
        assertThatThrownBy(() -> executor.execute(OP, null, new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("null");
        assertNothingHappened();
    }

    @Test
    void aKeyOver1024CharactersIsAKeyException() {
        assertThatThrownBy(() -> executor.execute(OP, "k".repeat(1025), new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("1024");
        assertNothingHappened();
    }

    @Test
    void aNullScopeIsAKeyException() {
        tenant.set(null);
        assertThatThrownBy(() -> executor.execute(OP, "k", new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("Refunds.issue").hasMessageContaining("IdempotencyScope returned null");
        assertNothingHappened();
    }

    @Test
    void aScopeWithAnUnpairedSurrogateIsAKeyException() {
        tenant.set("tenant-\ud800");
        assertThatThrownBy(() -> executor.execute(OP, "k", new Object[0], this::refund))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("scope");
        assertNothingHappened();
    }

    @Test
    void aScopeThatFailsPassesItsOwnExceptionThrough() {
        IdempotentExecutor failing = IdempotentExecutor.builder(store)
                .scope(() -> {
                    throw new SecurityException("no tenant in this request");
                })
                .listener(e -> outcomes.add(e.outcome()))
                .build();
        assertThatThrownBy(() -> failing.execute(OP, "k", new Object[0], this::refund))
                .isInstanceOf(SecurityException.class);
        assertNothingHappened();
    }

    @Test
    void tenantAsKeyCannotReplayTenantBsResult() {
        tenant.set("tenant-b");
        String b = executor.execute(OP, "REFUND-1", new Object[] {"b's payload"}, () -> "b's secret receipt");

        tenant.set("tenant-a");
        String a = executor.execute(OP, "REFUND-1", new Object[] {"a's payload"}, () -> "a's receipt");
        assertThat(a).as("A's call ran: it neither replayed B's result nor met B's fingerprint")
                .isEqualTo("a's receipt");

        tenant.set("tenant-b");
        assertThat(executor.execute(OP, "REFUND-1", new Object[] {"b's payload"}, () -> "ran again"))
                .isEqualTo(b);
        tenant.set("tenant-a");
        assertThat(executor.execute(OP, "REFUND-1", new Object[] {"a's payload"}, () -> "ran again"))
                .isEqualTo("a's receipt");
        assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.EXECUTED, Outcome.REPLAYED,
                Outcome.REPLAYED);
    }

    @Test
    void aScopeAndKeyCannotBeShiftedIntoEachOther() {
        tenant.set("a:");
        executor.execute(OP, "b", new Object[0], () -> "first");
        tenant.set("a");
        assertThat(executor.execute(OP, ":b", new Object[0], () -> "second")).isEqualTo("second");
    }

    @Test
    void noScopeMeansOneKeySpacePerOperation() {
        IdempotentExecutor unscoped = IdempotentExecutor.builder(store).build();
        unscoped.execute(OP, "shared", new Object[0], () -> "one");
        assertThat(unscoped.execute(OP, "shared", new Object[0], () -> "two")).isEqualTo("one");
        assertThat(store.find(Keys.hash(OP.name(), "", "shared"))).map(IdempotencyRecord::key)
                .isEqualTo(Optional.of("shared"));
    }
}
