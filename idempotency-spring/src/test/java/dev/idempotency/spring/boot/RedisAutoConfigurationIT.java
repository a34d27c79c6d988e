package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.ResolvedBy;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.redis.RedisPrefilter;
import dev.idempotency.store.CircuitBreakerStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code idempotency.redis.enabled=true} puts the Redis pre-filter between the circuit breaker and the local
 * pre-filter, on the machine's Redis ({@code IDEMPOTENCY_REDIS_URL}); without the property there is none.
 */
class RedisAutoConfigurationIT {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private final String prefix = "idempotency-test:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private String url;
    private RedisClient client;
    private StatefulRedisConnection<String, String> redis;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withUserConfiguration(IdempotencyAutoConfigurationTest.GreeterConfiguration.class,
                    IdempotencyAutoConfigurationTest.InMemoryStoreConfiguration.class)
            .withPropertyValues("idempotency.redis.secret=" + RedisAutoConfigurationTest.SECRET);

    @BeforeEach
    void openRedis() {
        url = System.getenv("IDEMPOTENCY_REDIS_URL");
        Assumptions.assumeTrue(url != null && !url.isBlank(), "IDEMPOTENCY_REDIS_URL is not set");
        client = RedisClient.create(url);
        redis = client.connect();
    }

    @AfterEach
    void deleteKeys() {
        if (redis == null) {
            return;
        }
        List<String> keys = redis.sync().keys(prefix + "*");
        if (!keys.isEmpty()) {
            redis.sync().del(keys.toArray(String[]::new));
        }
        redis.close();
        client.shutdown();
    }

    @Test
    void theRedisPreFilterGoesBetweenTheBreakerAndTheLocalPreFilterAndSharesOutcomes() {
        runner.withPropertyValues("idempotency.redis.enabled=true", "idempotency.redis.url=" + url,
                "idempotency.redis.key-prefix=" + prefix, "idempotency.redis.command-timeout=1s").run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(IdempotencyAutoConfiguration.StoreLayer.class);
                    var front = context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class);
                    assertThat(front.store()).isInstanceOf(CaffeinePrefilter.class);
                    RedisPrefilter shared = (RedisPrefilter) ((CaffeinePrefilter) front.store()).delegate();
                    assertThat(shared.delegate()).isInstanceOf(CircuitBreakerStore.class);
                    assertThat(((CircuitBreakerStore) shared.delegate()).delegate())
                            .isInstanceOf(InMemoryIdempotencyStore.class);
                    assertThat(front.toString()).contains("Redis pre-filter (", "key-prefix " + prefix)
                            .doesNotContain("redis://");

                    var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
                    context.getBean(io.micrometer.core.instrument.binder.MeterBinder.class).bindTo(registry);
                    context.getBean(IdempotencyAutoConfigurationTest.Greeter.class).greet("G-1", "Ann");
                    await().atMost(Duration.ofSeconds(5)).until(() -> !redis.sync().keys(prefix + "*").isEmpty());
                    assertThat(registry.get("idempotency.prefilter.redis.misses").functionCounter().count())
                            .isEqualTo(1);
                    assertThat(registry.get("idempotency.prefilter.redis.failures").functionCounter().count())
                            .isZero();
                    // a value written to Redis without the secret: a miss, counted, and the store decides
                    String forged = prefix + "{" + java.util.HexFormat.of().formatHex(
                            dev.idempotency.internal.Keys.hash("Greeter.greet", "", "G-2")) + "}";
                    redis.sync().set(forged, "2.forged");
                    context.getBean(IdempotencyAutoConfigurationTest.Greeter.class).greet("G-2", "Bob");
                    assertThat(registry.get("idempotency.prefilter.redis.rejected").functionCounter().count())
                            .isEqualTo(1);
                    await().atMost(Duration.ofSeconds(5)).until(() -> !"2.forged".equals(redis.sync().get(forged)));
                    // the admin works through the same chain: its eviction leaves Redis too
                    assertThat(context.getBean(IdempotencyAdmin.class).evict("Greeter.greet", "G-1", BY)).isTrue();
                    assertThat(redis.sync().exists(prefix + "{" + java.util.HexFormat.of().formatHex(
                            dev.idempotency.internal.Keys.hash("Greeter.greet", "", "G-1")) + "}")).isZero();
                });
    }

    @Test
    void withoutTheLocalPreFilterTheRedisOneFrontsTheBreakerAndTheStartupLineSaysSo() {
        runner.withPropertyValues("idempotency.redis.enabled=true", "idempotency.redis.url=" + url,
                "idempotency.redis.key-prefix=" + prefix, "idempotency.prefilter.enabled=false").run(context -> {
                    var front = context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class);
                    assertThat(front.store()).isInstanceOf(RedisPrefilter.class);
                    assertThat(front.toString()).contains(", no pre-filter", ", Redis pre-filter (")
                            .doesNotContain("behind the pre-filter");
                });
    }

    @Test
    void withoutThePropertyThereIsNoRedisPreFilter() {
        runner.run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(IdempotencyAutoConfiguration.StoreLayer.class));
    }
}
