package dev.idempotency.redis;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import dev.idempotency.store.tck.AbstractStoreConcurrencyTest;

/**
 * The store TCK (claims, leases, expiry and purge, many threads and the executor fuzz) through a
 * {@link RedisPrefilter} on the machine's Redis: whatever it answers from Redis, the store it fronts keeps every
 * promise of the SPI.
 */
class RedisPrefilterTckIT extends AbstractStoreConcurrencyTest {

    private TestRedis redis;

    @Override
    protected IdempotencyStore createStore() {
        redis = TestRedis.open();
        return RedisPrefilter.wrap(new InMemoryIdempotencyStore()).uri(redis.url).secret(TestRedis.SECRET)
                .keyPrefix(redis.prefix).clock(clock).build();
    }

    @Override
    protected void destroyStore(IdempotencyStore store) {
        ((RedisPrefilter) store).close();
        redis.close();
    }
}
