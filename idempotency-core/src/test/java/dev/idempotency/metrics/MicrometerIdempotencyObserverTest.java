package dev.idempotency.metrics;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

class MicrometerIdempotencyObserverTest {

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore())
            .observer(new MicrometerIdempotencyObserver(registry)).build();
    private final IdempotentOperation<String> create = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).build();

    @Test
    void eachCallIsAnObservationThatIsCurrentWhileTheMethodRuns() {
        AtomicReference<Observation> inside = new AtomicReference<>();
        executor.execute(create, "K1", new Object[] {"a"}, () -> {
            inside.set(registry.getCurrentObservation());
            return "order";
        });
        executor.execute(create, "K1", new Object[] {"a"}, () -> "never");

        Assertions.assertThat(inside.get()).isNotNull();
        Assertions.assertThat(inside.get().getContext().getName()).isEqualTo("idempotency.call");
        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("idempotency.call", 2)
                .hasAnObservation(o -> o.hasNameEqualTo("idempotency.call")
                        .hasContextualNameEqualTo("idempotency Orders.create")
                        .hasLowCardinalityKeyValue("operation", "Orders.create")
                        .hasLowCardinalityKeyValue("tier", "reversible")
                        .hasLowCardinalityKeyValue("outcome", "executed"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "replayed"));
        assertThat(registry).hasObservationWithNameEqualTo("idempotency.call").that().hasBeenStarted().hasBeenStopped();
    }

    @Test
    void aFailedCallRecordsItsErrorAndOutcome() {
        assertThatThrownBy(() -> executor.execute(create, "K2", new Object[] {"a"}, () -> {
            throw new IllegalStateException("boom");
        })).hasMessage("boom");
        assertThatThrownBy(() -> executor.execute(create, "", new Object[] {"a"}, () -> "never"))
                .isInstanceOf(IdempotencyKeyException.class);

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("idempotency.call", 2)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "failed")
                        .assertThatError().hasMessage("boom"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "failed")
                        .assertThatError().isInstanceOf(IdempotencyKeyException.class));
    }

    @Test
    void readOnlyCallsAreNotObserved() {
        IdempotentOperation<String> read = IdempotentOperation
                .builder("Orders.get", Tier.READ_ONLY, ResultType.of(String.class)).build();
        executor.execute(read, "", new Object[0], () -> "order");
        assertThat(registry).doesNotHaveAnyObservation();
    }
}
