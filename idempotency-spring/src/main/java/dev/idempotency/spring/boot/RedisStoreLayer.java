package dev.idempotency.spring.boot;

import dev.idempotency.redis.RedisPrefilter;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import io.lettuce.core.RedisURI;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
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

    /**
     * @throws IllegalStateException without {@code idempotency.redis.secret}: the application does not start, rather
     *         than share outcomes that anyone able to write to Redis could forge
     */
    RedisStoreLayer(String url, IdempotencyProperties.Redis settings, Clock clock) {
        String secret = settings.getSecret();
        if (secret == null || secret.isBlank()) {
            throw new IllegalStateException("idempotency.redis.enabled=true needs idempotency.redis.secret: a secret"
                    + " every node shares, at least 32 random bytes (openssl rand -base64 32), given for instance as"
                    + " the environment variable IDEMPOTENCY_REDIS_SECRET. Outcomes in Redis are authenticated with it"
                    + " (HMAC-SHA256), so that whoever can write to Redis without it can cause misses only, never a"
                    + " forged replay (docs/redis.md)");
        }
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
        RedisPrefilter.Builder builder = RedisPrefilter.wrap(store);
        try {
            if (settings.getClusterNodes().isEmpty()) {
                builder.uri(url);
            } else {
                builder.cluster(settings.getClusterNodes().toArray(String[]::new));
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException((settings.getClusterNodes().isEmpty() ? "idempotency.redis.url"
                    : "idempotency.redis.cluster-nodes") + " refused: " + e.getMessage(), e);
        }
        builder.keyPrefix(settings.getKeyPrefix())
                .commandTimeout(settings.getCommandTimeout()).retryAfter(settings.getRetryAfter())
                .transactions(SpringTransactionBridge.INSTANCE).clock(clock);
        try {
            builder.secret(Objects.requireNonNull(settings.getSecret())).acceptedSecrets(settings.getAcceptedSecrets());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("idempotency.redis.secret or idempotency.redis.accepted-secrets refused: "
                    + e.getMessage(), e);
        }
        RedisPrefilter made = builder.build();
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

    /**
     * What the startup line says: where Redis is (hosts and ports, a Sentinel's master name; never a password), the
     * prefix and the timeout.
     */
    @Override
    public String toString() {
        List<String> nodes = settings.getClusterNodes();
        String where;
        if (!nodes.isEmpty()) {
            where = "cluster " + nodes.stream().map(RedisStoreLayer::hostAndPort).collect(Collectors.joining(","));
        } else {
            RedisURI uri = RedisURI.create(url);
            where = uri.getSentinels().isEmpty() ? hostAndPort(uri) : "sentinel master " + uri.getSentinelMasterId()
                    + " via " + uri.getSentinels().stream().map(RedisStoreLayer::hostAndPort)
                            .collect(Collectors.joining(","));
        }
        return "Redis pre-filter (" + where + ", key-prefix " + settings.getKeyPrefix() + ", command-timeout "
                + settings.getCommandTimeout() + ")";
    }

    private static String hostAndPort(String uri) {
        return hostAndPort(RedisURI.create(uri));
    }

    private static String hostAndPort(RedisURI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }
}
