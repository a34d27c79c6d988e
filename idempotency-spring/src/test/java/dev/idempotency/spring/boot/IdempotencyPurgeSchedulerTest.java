package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.jdbc.JdbcPurgeJob;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

class IdempotencyPurgeSchedulerTest {

    private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

    /** Records what is scheduled instead of running it. */
    static final class RecordingScheduler extends ThreadPoolTaskScheduler {
        final List<Runnable> tasks = new ArrayList<>();
        final List<Instant> starts = new ArrayList<>();
        final List<Duration> delays = new ArrayList<>();

        RecordingScheduler() {
            setClock(Clock.fixed(NOW, ZoneOffset.UTC));
            initialize();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
            tasks.add(task);
            starts.add(startTime);
            delays.add(delay);
            // something to cancel on stop, that never runs the task itself
            return super.scheduleWithFixedDelay(() -> { }, startTime.plus(Duration.ofDays(1)), delay);
        }
    }

    private static void completeExpired(InMemoryIdempotencyStore store, String key, Instant expiresAt) {
        byte[] hash = Keys.hash("Op", "", key);
        Instant created = expiresAt.minus(Duration.ofHours(1));
        store.claim(new ClaimRequest(hash, "Op", key, hash, Tier.REVERSIBLE, created, created.plusSeconds(30),
                expiresAt, Duration.ofSeconds(10)));
        store.complete(hash, created.plusSeconds(30), new byte[] {'1'}, expiresAt);
    }

    @Test
    void aPurgeRemovesExpiredRecordsOnlyAndSaysHowMany() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        for (int i = 0; i < 5; i++) {
            completeExpired(store, "old" + i, NOW.minusSeconds(1));
        }
        completeExpired(store, "live", NOW.plusSeconds(60));
        IdempotencyPurgeScheduler purge = new IdempotencyPurgeScheduler(
                new JdbcPurgeJob(store, Clock.fixed(NOW, ZoneOffset.UTC), 2), "the store", null, Duration.ofHours(1));

        assertThat(purge.purge()).isEqualTo(5);
        assertThat(store.size()).isEqualTo(1);
        assertThat(purge.purge()).isZero();
    }

    @Test
    void aFailedPurgeIsLoggedNotThrown() {
        IdempotencyPurgeScheduler purge = new IdempotencyPurgeScheduler(new JdbcPurgeJob(FAILING_PURGE,
                Clock.fixed(NOW, ZoneOffset.UTC), 10), "a store that is down", null, Duration.ofHours(1));

        assertThat(purge.purge()).isEqualTo(-1);
    }

    @Test
    void theFirstPurgeRunsAfterAMinuteOrOneShorterInterval() {
        JdbcPurgeJob job = new JdbcPurgeJob(new InMemoryIdempotencyStore());
        assertThat(new IdempotencyPurgeScheduler(job, "s", null, Duration.ofHours(1)).firstRun())
                .isEqualTo(Duration.ofMinutes(1));
        assertThat(new IdempotencyPurgeScheduler(job, "s", null, Duration.ofSeconds(20)).firstRun())
                .isEqualTo(Duration.ofSeconds(20));
        assertThatThrownBy(() -> new IdempotencyPurgeScheduler(job, "s", null, Duration.ZERO))
                .hasMessageContaining("idempotency.purge.interval");
    }

    @Test
    void theAutoConfiguredPurgeRunsOnTheApplicationsSchedulerWithTheConfiguredIntervalAndBatch() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        for (int i = 0; i < 7; i++) {
            completeExpired(store, "old" + i, NOW.minusSeconds(1));
        }
        RecordingScheduler scheduler = new RecordingScheduler();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                        IdempotencyPurgeAutoConfiguration.class))
                .withBean(InMemoryIdempotencyStore.class, () -> store)
                .withBean(TaskScheduler.class, () -> scheduler)
                .withBean(Clock.class, () -> Clock.fixed(NOW, ZoneOffset.UTC))
                .withPropertyValues("idempotency.purge.interval=10m", "idempotency.purge.batch-size=3")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(IdempotencyPurgeScheduler.class);
                    assertThat(scheduler.delays).containsExactly(Duration.ofMinutes(10));
                    assertThat(scheduler.starts).containsExactly(NOW.plus(Duration.ofMinutes(1)));

                    scheduler.tasks.get(0).run();
                    assertThat(store.size()).isZero();
                });
    }

    @Test
    void withoutAnApplicationSchedulerThePurgeUsesItsOwnThreadUntilTheContextCloses() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                        IdempotencyPurgeAutoConfiguration.class))
                .withBean(InMemoryIdempotencyStore.class, InMemoryIdempotencyStore::new)
                .run(context -> {
                    IdempotencyPurgeScheduler purge = context.getBean(IdempotencyPurgeScheduler.class);
                    assertThat(purge.isRunning()).isTrue();
                    context.close();
                    assertThat(purge.isRunning()).isFalse();
                });
    }

    /** A store that fails, as a database that is down would. */
    private static final IdempotencyStore FAILING_PURGE = (IdempotencyStore) java.lang.reflect.Proxy.newProxyInstance(
            IdempotencyStore.class.getClassLoader(), new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                throw new IllegalStateException("database down: " + method.getName());
            });
}
