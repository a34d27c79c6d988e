package dev.idempotency.spring.boot;

import dev.idempotency.metrics.MicrometerBacklogGauges;
import dev.idempotency.store.IdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.TaskScheduler;

/**
 * The backlog gauges ({@link MicrometerBacklogGauges}: {@code NEEDS_REVIEW} records and claims stuck past their
 * lease, per operation) on the executor's store, refreshed every {@code idempotency.backlog.interval} on the
 * application's {@link TaskScheduler} (or a thread of its own); {@code idempotency.backlog.enabled=false} switches
 * them off. Only with a {@code MeterRegistry}. Separate from {@link IdempotencyAutoConfiguration} so that it runs after
 * the store is defined, whoever defines it.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "idempotency.backlog.enabled", matchIfMissing = true)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnSingleCandidate(IdempotencyStore.class)
public final class IdempotencyBacklogAutoConfiguration {

    @Bean
    MicrometerBacklogGauges idempotencyBacklogGauges(
            IdempotencyAutoConfiguration.IdempotencyStoreFront front, MeterRegistry registry,
            ObjectProvider<Clock> clock) {
        return new MicrometerBacklogGauges(front.store(), registry, clock.getIfUnique(Clock::systemUTC));
    }

    @Bean
    IdempotencyBacklogScheduler idempotencyBacklogScheduler(MicrometerBacklogGauges gauges,
            ObjectProvider<TaskScheduler> scheduler, IdempotencyProperties properties) {
        return new IdempotencyBacklogScheduler(gauges, scheduler.getIfUnique(), properties.getBacklog().getInterval());
    }
}
