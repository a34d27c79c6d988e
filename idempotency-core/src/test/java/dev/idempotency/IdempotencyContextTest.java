package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What code running inside a call, and an HTTP layer around calls, learns from IdempotencyContext. */
class IdempotencyContextTest {

    final IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
    final IdempotentOperation<String> outer = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).build();
    final IdempotentOperation<String> inner = IdempotentOperation
            .builder("Stock.reserve", Tier.REVERSIBLE, ResultType.of(String.class)).build();

    @AfterEach
    void nothingLeaksToTheNextTest() {
        assertThat(IdempotencyContext.current()).isEmpty();
    }

    @Test
    void aRunningMethodSeesItsCallAndANestedCallRestoresTheOuterOne() {
        List<Optional<IdempotencyContext.Call>> seen = new ArrayList<>();
        assertThat(IdempotencyContext.current()).isEmpty();
        executor.execute(outer, "O-1", new Object[0], () -> {
            seen.add(IdempotencyContext.current());
            executor.execute(inner, "S-1", new Object[0], () -> {
                seen.add(IdempotencyContext.current());
                return "reserved";
            });
            seen.add(IdempotencyContext.current());
            return "created";
        });
        assertThat(seen).containsExactly(
                Optional.of(new IdempotencyContext.Call("Orders.create", "O-1")),
                Optional.of(new IdempotencyContext.Call("Stock.reserve", "S-1")),
                Optional.of(new IdempotencyContext.Call("Orders.create", "O-1")));
        assertThat(IdempotencyContext.current()).isEmpty();
    }

    @Test
    void aScopeCollectsOutcomesAndTellsAReplay() {
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            assertThat(scope.lastOutcome()).isEmpty();
            assertThat(scope.replayed()).isFalse();
            executor.execute(outer, "O-2", new Object[0], () -> "created");
            assertThat(scope.lastOutcome()).contains(Outcome.EXECUTED);
            assertThat(scope.replayed()).isFalse();
            executor.execute(outer, "O-2", new Object[0], () -> "again");
            assertThat(scope.lastOutcome()).contains(Outcome.REPLAYED);
            assertThat(scope.replayed()).isTrue();
            executor.execute(outer, "O-3", new Object[0], () -> "created");
            assertThat(scope.lastOutcome()).contains(Outcome.EXECUTED);
            assertThat(scope.replayed()).as("a replay stays seen").isTrue();
        }
    }

    @Test
    void nestedScopesReportToEveryOpenScopeAndClosingRestoresTheOuter() {
        try (IdempotencyContext.Scope request = IdempotencyContext.open()) {
            executor.execute(outer, "O-4", new Object[0], () -> "created");
            try (IdempotencyContext.Scope step = IdempotencyContext.open()) {
                executor.execute(outer, "O-4", new Object[0], () -> "again");
                assertThat(step.replayed()).isTrue();
                assertThat(request.replayed()).isTrue();
            }
            IdempotencyContext.Scope afterInner = request;
            executor.execute(outer, "O-5", new Object[0], () -> "created");
            assertThat(afterInner.lastOutcome()).contains(Outcome.EXECUTED);
            try (IdempotencyContext.Scope fresh = IdempotencyContext.open()) {
                executor.execute(outer, "O-6", new Object[0], () -> "created");
                assertThat(fresh.replayed()).isFalse();
                assertThat(fresh.lastOutcome()).contains(Outcome.EXECUTED);
            }
        }
        // after the last scope closes, nothing collects: a new scope starts empty
        executor.execute(outer, "O-4", new Object[0], () -> "again");
        try (IdempotencyContext.Scope later = IdempotencyContext.open()) {
            assertThat(later.replayed()).isFalse();
            assertThat(later.lastOutcome()).isEmpty();
        }
    }

    @Test
    void aClosedInnerScopeNoLongerCollects() {
        try (IdempotencyContext.Scope request = IdempotencyContext.open()) {
            IdempotencyContext.Scope step = IdempotencyContext.open();
            step.close();
            executor.execute(outer, "O-7", new Object[0], () -> "created");
            assertThat(step.lastOutcome()).isEmpty();
            assertThat(request.lastOutcome()).contains(Outcome.EXECUTED);
        }
    }
}
