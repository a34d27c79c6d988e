package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;

/** What the builder refuses, and the order of the store fronts: no Redis is needed, it connects at first use. */
class RedisPrefilterBuilderTest {

    private final IdempotencyStore store = new InMemoryIdempotencyStore();

    private RedisPrefilter.Builder builder(IdempotencyStore inner) {
        return RedisPrefilter.wrap(inner).uri("redis://127.0.0.1:1").secret(TestRedis.SECRET);
    }

    @Test
    void theNodesPreFilterGoesInFrontOfTheSharedOneNeverBehindIt() {
        IdempotencyStore caffeine = CaffeinePrefilter.wrap(store).build();
        assertThatThrownBy(() -> builder(caffeine).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a CaffeinePrefilter goes in front of the RedisPrefilter, not behind it:"
                        + " CaffeinePrefilter.wrap(RedisPrefilter.wrap(store)...build())");
        try (RedisPrefilter redis = builder(store).build()) {
            assertThatThrownBy(() -> builder(redis).build()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the store is already wrapped in a RedisPrefilter");
            assertThat(CaffeinePrefilter.wrap(redis).build()).isNotNull();
        }
    }

    @Test
    void aClusterIsGivenByRedisUrisOfItsNodes() {
        assertThatThrownBy(() -> RedisPrefilter.wrap(store).cluster()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one node");
        assertThatThrownBy(() -> RedisPrefilter.wrap(store).cluster("redis://127.0.0.1:7000", "not a uri"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cluster[1]")
                .hasMessageContaining("not a uri");
        assertThatThrownBy(() -> RedisPrefilter.wrap(store).cluster("redis-sentinel://127.0.0.1:26379#m"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is a Sentinel URI");
        try (RedisPrefilter cluster = RedisPrefilter.wrap(store).cluster("redis://127.0.0.1:7000")
                .secret(TestRedis.SECRET).build()) {
            assertThat(cluster.toString()).startsWith("RedisPrefilter[cluster, prefix idempotency:");
        }
        // the last of uri(...), cluster(...) and client(...) wins
        try (RedisPrefilter single = RedisPrefilter.wrap(store).cluster("redis://127.0.0.1:7000")
                .uri("redis-sentinel://127.0.0.1:26379#m").secret(TestRedis.SECRET).build()) {
            assertThat(single.toString()).startsWith("RedisPrefilter[prefix");
        }
    }
}
