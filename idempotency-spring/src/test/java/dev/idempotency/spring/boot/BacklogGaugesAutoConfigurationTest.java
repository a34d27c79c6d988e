package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.metrics.MicrometerBacklogGauges;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With a {@code MeterRegistry}, the backlog gauges are refreshed on a schedule from the executor's store (through its
 * pre-filter, which forwards the query), and the purge scheduler's runs are metered.
 */
class BacklogGaugesAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                    IdempotencyPurgeAutoConfiguration.class, IdempotencyBacklogAutoConfiguration.class))
            .withUserConfiguration(IdempotencyAutoConfigurationTest.GreeterConfiguration.class,
                    IdempotencyAutoConfigurationTest.InMemoryStoreConfiguration.class)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    @Test
    void theGaugesAreScheduledOnTheExecutorsStoreAndThePurgeIsMetered() {
        runner.withPropertyValues("idempotency.backlog.interval=10m").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(MicrometerBacklogGauges.class);
            IdempotencyBacklogScheduler scheduler = context.getBean(IdempotencyBacklogScheduler.class);
            assertThat(scheduler.interval()).isEqualTo(Duration.ofMinutes(10));
            assertThat(scheduler.firstRun()).isZero();
            assertThat(scheduler.isRunning()).isTrue();
            assertThat(context.getBean(MicrometerBacklogGauges.class).refresh()).isEmpty();

            context.getBean(IdempotencyPurgeScheduler.class).purge();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("idempotency.purge.runs").tag("result", "success").counter().count())
                    .isEqualTo(1);
            assertThat(context.getBean(InMemoryIdempotencyStore.class)).isNotNull();
        });
    }

    @Test
    void thePropertyTurnsTheGaugesOff() {
        runner.withPropertyValues("idempotency.backlog.enabled=false").run(context -> assertThat(context)
                .hasNotFailed().doesNotHaveBean(MicrometerBacklogGauges.class)
                .doesNotHaveBean(IdempotencyBacklogScheduler.class));
    }
}
