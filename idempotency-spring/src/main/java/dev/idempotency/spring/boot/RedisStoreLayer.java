package dev.idempotency.spring.boot;

import dev.idempotency.redis.RedisPrefilter;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import java.net.URI;
import java.time.Clock;
import org.jspecify.annotations.Nullable;

/**
 * Puts a {@link RedisPrefilter} in front of the store ({@code idempotency.redis.*}), and closes it with the context.
 * Loaded only when idempotency-redis is on the class path. Nothing in it names Micrometer, which may be absent: its
 * counters are {@link RedisPrefilterMeters}.
 */
final class RedisStoreLayer implements IdempotencyAutoConfiguration.StoreLayer, AutoCloseable {

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

    /** The pre-filter once it is in front of the store, else null. */
    @Nullable RedisPrefilter prefilter() {
        return prefilter;
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
