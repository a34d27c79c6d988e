package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdempotencyObserverTest {

    private final IdempotentOperation<String> create = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).build();

    @Test
    void theObserverWrapsTheWholeCallAndLearnsItsOutcome() {
        List<String> trace = new ArrayList<>();
        IdempotencyObserver observer = new IdempotencyObserver() {
            @Override
            public <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation)
                    throws E {
                trace.add("before " + operation.name() + " " + invocation.outcome().isPresent());
                try {
                    return invocation.proceed();
                } finally {
                    trace.add("after " + invocation.outcome().map(IdempotencyEvent.Outcome::tagValue).orElse("?"));
                }
            }
        };
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore())
                .listener(e -> trace.add("event " + e.outcome().tagValue())).observer(observer).build();

        executor.execute(create, "K1", new Object[] {"a"}, () -> {
            trace.add("method");
            return "order";
        });
        executor.execute(create, "K1", new Object[] {"a"}, () -> "never");
        assertThatThrownBy(() -> executor.execute(create, "K1", new Object[] {"b"}, () -> "never"))
                .isInstanceOf(IdempotencyKeyReusedException.class);

        assertThat(trace).containsExactly(
                "before Orders.create false", "method", "event executed", "after executed",
                "before Orders.create false", "event replayed", "after replayed",
                "before Orders.create false", "event key_reused", "after key_reused");
    }

    @Test
    void anInvocationProceedsOnlyOnce() {
        IdempotencyObserver twice = new IdempotencyObserver() {
            @Override
            public <T, E extends Throwable> T around(IdempotentOperation<?> operation, Invocation<T, E> invocation)
                    throws E {
                invocation.proceed();
                return invocation.proceed();
            }
        };
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).observer(twice)
                .build();

        assertThatThrownBy(() -> executor.execute(create, "K1", new Object[] {"a"}, () -> "order"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("only once");
    }
}
