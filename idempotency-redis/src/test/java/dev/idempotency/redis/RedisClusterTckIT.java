package dev.idempotency.redis;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import dev.idempotency.store.tck.AbstractStoreConcurrencyTest;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store TCK (claims, leases, expiry and purge, many threads and the executor fuzz) through a
 * {@link RedisPrefilter} on a Redis Cluster of six nodes (three masters, three replicas) this class starts: every
 * outcome key and its eviction marker land on the master of their one slot, spread over the three masters.
 */
class RedisClusterTckIT extends AbstractStoreConcurrencyTest {

    static final int[] PORTS = {7000, 7001, 7002, 7003, 7004, 7005};

    private static RedisServers servers;

    @BeforeAll
    static void startCluster() throws Exception {
        servers = RedisServers.open("cluster-tck");
        servers.cluster(PORTS);
    }

    @AfterAll
    static void stopCluster() {
        if (servers != null) {
            servers.close();
        }
    }

    @Override
    protected IdempotencyStore createStore() {
        // a prefix per test: a new store each test, so no outcome of an earlier test may replay
        return RedisPrefilter.wrap(new InMemoryIdempotencyStore()).cluster("redis://127.0.0.1:" + PORTS[0],
                "redis://127.0.0.1:" + PORTS[1]).secret(TestRedis.SECRET)
                .keyPrefix("tck:" + UUID.randomUUID().toString().substring(0, 8) + ":").clock(clock).build();
    }

    @Override
    protected void destroyStore(IdempotencyStore store) {
        ((RedisPrefilter) store).close();
    }
}
