package dev.idempotency.spring.boot;

import dev.idempotency.redis.RedisPrefilter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToLongFunction;

/**
 * The Redis pre-filter's counters ({@code idempotency.prefilter.redis.*}), reading its own; they read 0 until the
 * pre-filter is in front of the store. Loaded only when Micrometer is on the class path.
 */
final class RedisPrefilterMeters implements MeterBinder {

    /** The counter of claims answered from Redis. */
    static final String HITS = "idempotency.prefilter.redis.hits";
    /** The counter of claims Redis could not answer (they went to the store). */
    static final String MISSES = "idempotency.prefilter.redis.misses";
    /** The counter of Redis commands that failed or timed out. */
    static final String FAILURES = "idempotency.prefilter.redis.failures";
    /** The counter of values in Redis that were not authentic outcomes of their key (each a miss, deleted). */
    static final String REJECTED = "idempotency.prefilter.redis.rejected";

    private final RedisStoreLayer layer;

    RedisPrefilterMeters(RedisStoreLayer layer) {
        this.layer = layer;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, HITS, "Idempotency claims answered from the Redis pre-filter", RedisPrefilter::hits);
        counter(registry, MISSES, "Idempotency claims the Redis pre-filter could not answer", RedisPrefilter::misses);
        counter(registry, FAILURES, "Redis pre-filter commands that failed or timed out", RedisPrefilter::failures);
        counter(registry, REJECTED, "Values in the Redis pre-filter that were not authentic outcomes of their key",
                RedisPrefilter::rejected);
    }

    private void counter(MeterRegistry registry, String name, String description,
            ToLongFunction<RedisPrefilter> count) {
        FunctionCounter.builder(name, layer, l -> {
            RedisPrefilter made = l.prefilter();
            return made == null ? 0 : count.applyAsLong(made);
        }).description(description).register(registry);
    }
}
