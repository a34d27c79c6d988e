package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A call's own scope: hashed apart from the key, in place of the executor's {@link IdempotencyScope}. */
class ScopedExecuteTest {

    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(store)
            .scope(() -> "from-the-scope-bean").build();
    private final IdempotentOperation<String> op = IdempotentOperation
            .builder("orders", Tier.REVERSIBLE, ResultType.of(String.class)).build();
    private final AtomicInteger runs = new AtomicInteger();

    private String run(String scope, String key) {
        return executor.execute(op, scope, key, new Object[0], () -> "ran " + runs.incrementAndGet());
    }

    @Test
    void aScopeAndAKeyThatJoinAlikeAreTwoKeys() {
        assertThat(run("t1", "x:y")).isEqualTo("ran 1");
        assertThat(run("t1:x", "y")).isEqualTo("ran 2");
        assertThat(run("t2", "x:y")).isEqualTo("ran 3");
        assertThat(run("t1", "x:y")).as("the same tenant's key replays").isEqualTo("ran 1");
        assertThat(runs).hasValue(3);
    }

    @Test
    void theCallsScopeTakesThePlaceOfTheExecutors() {
        run("", "k");
        String viaBean = executor.execute(op, "k", new Object[0], () -> "ran " + runs.incrementAndGet());
        assertThat(viaBean).as("the scope bean's scope is another than the empty one")
                .isEqualTo("ran 2");
        assertThat(executor.execute(op, "from-the-scope-bean", "k", new Object[0], () -> "again"))
                .isEqualTo("ran 2");
    }

    @Test
    void aNullScopeIsRefused() {
        assertThatThrownBy(() -> run(null, "k")).isInstanceOf(NullPointerException.class).hasMessage("scope");
        assertThat(runs).hasValue(0);
    }
}
