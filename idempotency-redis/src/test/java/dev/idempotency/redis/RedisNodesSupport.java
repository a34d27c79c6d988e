package dev.idempotency.redis;

import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the suites of nodes on one Redis share: the machine's Redis ({@link TestRedis}), one database (an in-memory
 * store) behind every node, the runs of each key, and what a test opened, closed after it.
 */
abstract class RedisNodesSupport {

    TestRedis redis;
    final Node.Database database = new Node.Database(new InMemoryIdempotencyStore());
    final Map<String, AtomicInteger> runs = Node.newRuns();
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void openRedis() {
        redis = TestRedis.open();
    }

    @AfterEach
    void closeAll() throws Exception {
        if (redis == null) {
            return; // skipped: no Redis
        }
        for (AutoCloseable c : open) {
            c.close();
        }
        redis.close();
    }
}
