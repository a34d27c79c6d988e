package dev.idempotency.redis;

import static dev.idempotency.redis.FailoverRun.callAndCheck;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.ResolvedBy;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
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
 * A master of a six-node Redis Cluster this class starts is killed (SIGKILL) while a node keeps calling: no call
 * ever gets a wrong answer (every key runs once, every replay is that run's outcome), the keys of the dead master's
 * slots fall through to the store while the slots are down (each call costing at most about a command timeout), and
 * once its replica has taken over, those keys replay from Redis again and new outcomes are shared there.
 */
class RedisClusterFailoverIT {

    private static final int[] PORTS = {7006, 7007, 7008, 7009, 7010, 7011};
    private static final int KEYS = 60;

    private RedisServers servers;
    private RedisClusterClient probeClient;
    private StatefulRedisClusterConnection<String, String> probe;
    private final Node.Database database = new Node.Database(new InMemoryIdempotencyStore());
    private final Map<String, AtomicInteger> runs = Node.newRuns();
    private final List<Node> nodes = new ArrayList<>();
    private final String prefix = "failover:";

    @BeforeEach
    void startCluster() throws Exception {
        servers = RedisServers.open("cluster-failover");
        servers.cluster(PORTS);
        probeClient = RedisClusterClient.create(RedisURI.create("redis://127.0.0.1:" + PORTS[0]));
        probe = probeClient.connect();
    }

    @AfterEach
    void stopCluster() {
        nodes.forEach(Node::close);
        if (probe != null) {
            probe.close();
            probeClient.shutdown();
        }
        if (servers != null) {
            servers.close();
        }
    }

    private Node node() {
        Node node = new Node(RedisPrefilter.wrap(database).cluster("redis://127.0.0.1:" + PORTS[0],
                "redis://127.0.0.1:" + PORTS[1], "redis://127.0.0.1:" + PORTS[2]).secret(TestRedis.SECRET)
                .keyPrefix(prefix).commandTimeout(FailoverRun.TIMEOUT).retryAfter(Duration.ofMillis(200)).build(),
                runs);
        nodes.add(node);
        return node;
    }

    private String redisKey(String key) {
        return prefix + "{" + HexFormat.of().formatHex(Keys.hash(Node.ORDER.name(), "", key)) + "}";
    }

    /** The port of the master that serves {@code key}'s slot, as the cluster told the probe at the start. */
    private int masterPort(String key) {
        RedisClusterNode master = probe.getPartitions().getMasterBySlot(SlotHash.getSlot(redisKey(key)));
        return master.getUri().getPort();
    }

    @Test
    void aMasterKilledMidRunNeverCausesAWrongAnswerAndItsReplicaServesTheSlotsAgain() throws Exception {
        Node a = node();
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add("K-" + k);
            a.call("K-" + k);
        }
        RedisServers.await(Duration.ofSeconds(10), () -> keys.stream()
                .allMatch(k -> probe.sync().exists(redisKey(k)) == 1), () -> "not every outcome reached the cluster");
        int victim = masterPort(keys.get(0));
        List<String> victims = keys.stream().filter(k -> masterPort(k) == victim).toList();
        assertThat(victims).as("keys on the master to kill").hasSizeBetween(5, KEYS - 5);
        for (String k : keys) {
            assertThat(callAndCheck(a, k)).isEqualTo(Outcome.REPLAYED_CACHED);
        }
        // the replica has every outcome before its master dies (what replication may lose is a miss, not tested)
        int replica = PORTS[0];
        for (int port : PORTS) {
            String role = servers.cli(port, "role");
            if (role.startsWith("slave") && role.contains("\n" + victim + "\n")) {
                replica = port;
            }
        }
        int replicaPort = replica;
        RedisServers.await(Duration.ofSeconds(10), () -> servers.cli(replicaPort, "dbsize").strip()
                .equals(servers.cli(victim, "dbsize").strip()), () -> "the replica did not catch up");

        int surviving = victim == PORTS[0] ? PORTS[1] : PORTS[0];
        // recovered: the keys of the dead master's slots replay from Redis again
        FailoverRun run = FailoverRun.run(a, a, keys, () -> servers.kill(victim), () -> failedOver(surviving, victim),
                () -> victims.stream().allMatch(k -> callAndCheck(a, k) == Outcome.REPLAYED_CACHED));
        assertThat(a.prefilter.failures()).isPositive();

        // new outcomes of the taken-over slots are shared again, and a node that never saw a key replays it
        String late = victims.get(0) + "-late";
        int tries = 0;
        while (masterPort(late) != victim && tries < 1000) { // a key of the slots the replica took over
            late = victims.get(0) + "-late" + tries++;
        }
        a.call(late);
        Node b = node();
        String lateKey = late;
        RedisServers.await(Duration.ofSeconds(10), () -> b.call(lateKey).equals(lateKey + "#1")
                && b.lastOutcome() == Outcome.REPLAYED_CACHED, () -> "a new outcome was not shared after failover");
        for (String k : victims) {
            assertThat(b.call(k)).isEqualTo(k + "#1");
            assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
        }
        assertThat(runs).allSatisfy((key, n) -> assertThat(n).as("runs of %s", key).hasValue(1));

        // an eviction on the promoted master: the outcome and its marker are written in one slot by one script
        String evicted = victims.get(0);
        assertThat(IdempotencyAdmin.builder(a.prefilter).build().evict(Node.ORDER.name(), evicted,
                new ResolvedBy("test-operator", "after the failover"))).isTrue();
        assertThat(servers.cli(replicaPort, "exists", redisKey(evicted)).strip()).isEqualTo("0");
        assertThat(servers.cli(replicaPort, "exists", prefix + "evicted:" + redisKey(evicted).substring(prefix
                .length())).strip()).isEqualTo("1");
        assertThat(b.call(evicted)).isEqualTo(evicted + "#2");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        System.out.println(run.line("cluster failover: master " + victim + " killed"));
    }

    /** Whether the cluster, seen from {@code surviving}, is whole again with the dead master's slots moved away. */
    private boolean failedOver(int surviving, int dead) {
        if (!servers.cli(surviving, "cluster", "info").contains("cluster_state:ok")) {
            return false;
        }
        for (String line : servers.cli(surviving, "cluster", "nodes").split("\n")) {
            String[] parts = line.strip().split(" ");
            if (parts.length > 1 && parts[1].startsWith("127.0.0.1:" + dead + "@")) {
                return parts.length <= 8; // no slot ranges left
            }
        }
        return false;
    }
}
