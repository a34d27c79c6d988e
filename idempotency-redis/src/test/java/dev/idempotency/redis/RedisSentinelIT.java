package dev.idempotency.redis;

import static dev.idempotency.redis.FailoverRun.callAndCheck;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.ResolvedBy;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pre-filter through Sentinel ({@code redis-sentinel://} URI), on a master, its replica and three sentinels this
 * class starts: outcomes are shared through the master the sentinels name; when that master is killed (SIGKILL),
 * no call gets a wrong answer, the store answers while there is no master, and once the sentinels have promoted the
 * replica the pre-filter reconnects to it by itself: what was shared before replays, and new outcomes are shared.
 */
class RedisSentinelIT {

    private static final int MASTER = 7012;
    private static final int REPLICA = 7013;
    private static final int[] SENTINELS = {26380, 26381, 26382};
    private static final String NAME = "idempotency-test";
    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private RedisServers servers;
    private final Node.Database database = new Node.Database(new InMemoryIdempotencyStore());
    private final Map<String, AtomicInteger> runs = Node.newRuns();
    private final List<Node> nodes = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        servers = RedisServers.open("sentinel");
        servers.server(MASTER);
        servers.server(REPLICA, "--replicaof", "127.0.0.1", Integer.toString(MASTER), "--enable-debug-command", "yes");
        for (int port : SENTINELS) {
            servers.sentinel(port, NAME, MASTER, 2);
        }
        // ready once every sentinel knows the replica and the two other sentinels (they tell each other every 2 s)
        RedisServers.await(Duration.ofSeconds(20), () -> {
            for (int port : SENTINELS) {
                String master = servers.cli(port, "sentinel", "master", NAME);
                if (!master.contains("num-slaves\n1\n") || !master.contains("num-other-sentinels\n2\n")) {
                    return false;
                }
            }
            return servers.cli(REPLICA, "info", "replication").contains("master_link_status:up");
        }, () -> "the sentinels did not come up: " + servers.cli(SENTINELS[0], "sentinel", "master", NAME));
    }

    @AfterEach
    void stop() {
        nodes.forEach(Node::close);
        if (servers != null) {
            servers.close();
        }
    }

    private Node node() {
        String uri = "redis-sentinel://127.0.0.1:" + SENTINELS[0] + ",127.0.0.1:" + SENTINELS[1] + ",127.0.0.1:"
                + SENTINELS[2] + "#" + NAME;
        Node node = new Node(RedisPrefilter.wrap(database).uri(uri).secret(TestRedis.SECRET).keyPrefix("sentinel:")
                .commandTimeout(FailoverRun.TIMEOUT).retryAfter(Duration.ofMillis(200)).build(), runs);
        nodes.add(node);
        return node;
    }

    /**
     * An eviction counts only once the replica has it: a failover right after must not bring the evicted outcome
     * back. With the replica stalled, the eviction fails and the store keeps the record; once it answers again, the
     * eviction is on the replica by the time it returns.
     */
    private void evictionsWaitForTheReplica(Node a, Node b) throws Exception {
        IdempotencyAdmin admin = IdempotencyAdmin.builder(a.prefilter).build();
        a.call("E-1");
        String redisKey = "sentinel:{" + HexFormat.of().formatHex(Keys.hash(Node.ORDER.name(), "", "E-1")) + "}";
        RedisServers.await(Duration.ofSeconds(10), () -> servers.cli(REPLICA, "exists", redisKey).strip().equals("1"),
                () -> "E-1 did not reach the replica");
        Thread stall = new Thread(() -> servers.cli(REPLICA, "debug", "sleep", "1.5"));
        stall.start();
        Thread.sleep(300);
        assertThatThrownBy(() -> admin.evict(Node.ORDER.name(), "E-1", BY)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("key 'E-1'").hasMessageContaining("the store was not changed");
        assertThat(b.call("E-1")).isEqualTo("E-1#1"); // the store still holds it
        stall.join();
        assertThat(admin.evict(Node.ORDER.name(), "E-1", BY)).isTrue();
        assertThat(servers.cli(REPLICA, "exists", redisKey).strip()).isEqualTo("0");
        assertThat(b.call("E-1")).isEqualTo("E-1#2");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        runs.remove("E-1");
    }

    @Test
    void outcomesAreSharedThroughTheMasterTheSentinelsNameAndAgainAfterAFailover() throws Exception {
        Node a = node();
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 20; k++) {
            keys.add("K-" + k);
            assertThat(a.call("K-" + k)).isEqualTo("K-" + k + "#1"); // the first call warms the JVM: not timed
            assertThat(a.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        }
        RedisServers.await(Duration.ofSeconds(10), () -> servers.cli(MASTER, "dbsize").strip().equals("20")
                && servers.cli(REPLICA, "dbsize").strip().equals("20"), () -> "the outcomes did not reach both");
        Node b = node(); // another node, that never ran a key: it replays each from the master
        for (String k : keys) {
            assertThat(callAndCheck(b, k)).isEqualTo(Outcome.REPLAYED_CACHED);
        }

        evictionsWaitForTheReplica(a, b);

        FailoverRun run = FailoverRun.run(b, a, keys, () -> servers.kill(MASTER), () -> servers.cli(SENTINELS[0],
                "sentinel", "get-master-addr-by-name", NAME).contains(Integer.toString(REPLICA)),
                () -> callAndCheck(b, "K-0") == Outcome.REPLAYED_CACHED);
        // what the old master shared replays from the new one, on both nodes; and a new outcome is shared there
        for (String k : keys.subList(0, 20)) {
            assertThat(callAndCheck(a, k)).isEqualTo(Outcome.REPLAYED_CACHED);
            assertThat(callAndCheck(b, k)).isEqualTo(Outcome.REPLAYED_CACHED);
        }
        a.call("after-failover");
        RedisServers.await(Duration.ofSeconds(10), () -> b.call("after-failover").equals("after-failover#1")
                && b.lastOutcome() == Outcome.REPLAYED_CACHED, () -> "a new outcome was not shared after failover");
        assertThat(servers.cli(REPLICA, "role")).startsWith("master");
        assertThat(runs).allSatisfy((key, n) -> assertThat(n).as("runs of %s", key).hasValue(1));
        System.out.println(run.line("sentinel failover: master killed"));
    }
}
