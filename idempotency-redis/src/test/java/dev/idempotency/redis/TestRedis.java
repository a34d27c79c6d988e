package dev.idempotency.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The machine's Redis, at {@code IDEMPOTENCY_REDIS_URL} (e.g. {@code redis://127.0.0.1:6379}). The suites are
 * skipped only when the variable is absent; where it is set, an unreachable Redis fails them. Every test writes
 * under a prefix of its own and deletes its keys after: the server is shared, never flushed.
 */
final class TestRedis implements AutoCloseable {

    static final String VARIABLE = "IDEMPOTENCY_REDIS_URL";
    /** The secret the suites' nodes share. */
    static final String SECRET = "the-redis-suites-secret-0123456789abcdef";

    final String url;
    final RedisURI uri;
    final String prefix = "idempotency-test:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    private TestRedis(String url) {
        this.url = url;
        this.uri = RedisURI.create(url);
        this.client = RedisClient.create(uri);
        this.connection = client.connect(); // fails the test if the variable is set and Redis is not there
    }

    /** The machine's Redis, or the test is skipped when {@value #VARIABLE} is not set. */
    static TestRedis open() {
        String url = System.getenv(VARIABLE);
        Assumptions.assumeTrue(url != null && !url.isBlank(), VARIABLE + " is not set");
        return new TestRedis(url);
    }

    /** A direct connection, to look at or change what the pre-filter wrote. */
    RedisCommands<String, String> commands() {
        return connection.sync();
    }

    /** How many keys exist under this test's prefix. */
    long keys() {
        return scan().size();
    }

    private java.util.List<String> scan() {
        java.util.List<String> keys = new java.util.ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = commands().scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
            keys.addAll(page.getKeys());
            cursor = page;
        } while (!cursor.isFinished());
        return keys;
    }

    /** Deletes this test's keys, and closes. */
    @Override
    public void close() {
        java.util.List<String> keys = scan();
        if (!keys.isEmpty()) {
            commands().del(keys.toArray(String[]::new));
        }
        connection.close();
        client.shutdown();
    }
}
