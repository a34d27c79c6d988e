package dev.idempotency.spring.boot;

import dev.idempotency.redis.RedisPrefilter;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import java.net.URI;
import java.time.Clock;
import org.jspecify.annotations.Nullable;

/**
 * Puts a {@link RedisPrefilter} in front of the store ({@code idempotency.redis.*}), and closes it with the context.
 * Loaded only when idempotency-redis is on the class path.
 */
final class RedisStoreLayer implements IdempotencyAutoConfiguration.StoreLayer, AutoCloseable {

    /** The counter of claims answered from Redis. */
    static final String HITS = "idempotency.prefilter.redis.hits";
    /** The counter of claims Redis could not answer (they went to the store). */
    static final String MISSES = "idempotency.prefilter.redis.misses";
    /** The counter of Redis commands that failed or timed out. */
    static final String FAILURES = "idempotency.prefilter.redis.failures";

    private final String url;
    private final IdempotencyProperties.Redis settings;
    private final Clock clock;
    private volatile @Nullable RedisPrefilter prefilter;

    RedisStoreLayer(String url, IdempotencyProperties.Redis settings, Clock clock) {
        this.url = url;
        this.settings = settings;
        this.clock = clock;
    }

    @Override
    public synchronized IdempotencyStore wrap(IdempotencyStore store) {
        if (store instanceof RedisPrefilter) {
            return store; // the application put one in front of its store itself
        }
        if (prefilter != null) {
            throw new IllegalStateException("the Redis pre-filter is already in front of a store");
        }
        RedisPrefilter made = RedisPrefilter.wrap(store).uri(url).keyPrefix(settings.getKeyPrefix())
                .commandTimeout(settings.getCommandTimeout()).retryAfter(settings.getRetryAfter())
                .transactions(SpringTransactionBridge.INSTANCE).clock(clock).build();
        prefilter = made;
        return made;
    }

    /**
     * Registers the pre-filter's counters ({@value #HITS}, {@value #MISSES}, {@value #FAILURES}) in
     * {@code registry}; they read 0 until the pre-filter is in front of the store. Needs Micrometer.
     */
    void bindTo(io.micrometer.core.instrument.MeterRegistry registry) {
        counter(registry, HITS, "Idempotency claims answered from the Redis pre-filter", RedisPrefilter::hits);
        counter(registry, MISSES, "Idempotency claims the Redis pre-filter could not answer", RedisPrefilter::misses);
        counter(registry, FAILURES, "Redis pre-filter commands that failed or timed out", RedisPrefilter::failures);
    }

    private void counter(io.micrometer.core.instrument.MeterRegistry registry, String name, String description,
            java.util.function.ToLongFunction<RedisPrefilter> count) {
        io.micrometer.core.instrument.FunctionCounter.builder(name, this, layer -> {
            RedisPrefilter made = layer.prefilter;
            return made == null ? 0 : count.applyAsLong(made);
        }).description(description).register(registry);
    }

    @Override
    public void close() {
        RedisPrefilter made = prefilter;
        if (made != null) {
            made.close();
        }
    }

    /** What the startup line says: the Redis host and port (never a password), the prefix and the timeout. */
    @Override
    public String toString() {
        URI uri = URI.create(url);
        return "Redis pre-filter (" + uri.getHost() + ":" + (uri.getPort() < 0 ? 6379 : uri.getPort()) + ", key-prefix "
                + settings.getKeyPrefix() + ", command-timeout " + settings.getCommandTimeout() + ")";
    }
}
