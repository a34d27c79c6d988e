package dev.idempotency.spring.boot;

import dev.idempotency.jdbc.JdbcIdempotencyAudit;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.jdbc.JdbcPurgeJob;
import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.TaskScheduler;

/**
 * Schedules the purge of expired records ({@link JdbcPurgeJob}, which works on any {@link IdempotencyStore}) on the
 * application's {@link TaskScheduler}, or on a thread of its own when there is none, every
 * {@code idempotency.purge.interval}; {@code idempotency.purge.enabled=false} switches it off. It needs
 * {@code idempotency-jdbc-store} on the class path (where {@link JdbcPurgeJob} lives), even with a store of another
 * kind; without it, nothing is scheduled. With the JDBC store and its {@link JdbcIdempotencyAudit}, each purge also
 * deletes the audit's attempt rows of keys whose record is gone (the resolutions are kept). Separate from
 * {@link IdempotencyAutoConfiguration} so that it runs after the store is defined, whoever defines it.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "idempotency.purge.enabled", matchIfMissing = true)
@ConditionalOnClass(JdbcPurgeJob.class)
@ConditionalOnSingleCandidate(IdempotencyStore.class)
public final class IdempotencyPurgeAutoConfiguration {

    @Bean
    IdempotencyPurgeScheduler idempotencyPurgeScheduler(IdempotencyStore store, ObjectProvider<Clock> clock,
            ObjectProvider<TaskScheduler> scheduler, IdempotencyProperties properties,
            ObjectProvider<IdempotencyPurgeScheduler.Observer> observers, ObjectProvider<JdbcIdempotencyAudit> audit) {
        IdempotencyProperties.Purge purge = properties.getPurge();
        Clock theClock = clock.getIfUnique(Clock::systemUTC);
        // the attempts of keys whose record is gone go with them; the resolutions stay
        JdbcPurgeJob job = new JdbcPurgeJob(store, theClock, purge.getBatchSize(),
                store instanceof JdbcIdempotencyStore ? audit.getIfUnique() : null);
        return new IdempotencyPurgeScheduler(job, store.toString(), scheduler.getIfUnique(), purge.getInterval(),
                theClock, (deleted, at, failure) -> observers.orderedStream()
                        .forEach(o -> o.purged(deleted, at, failure)));
    }
}
