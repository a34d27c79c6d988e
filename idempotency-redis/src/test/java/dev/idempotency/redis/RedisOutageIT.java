package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.net.ServerSocket;
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
 * Redis killed, hanging or never there, through a TCP proxy the test owns between the client and the machine's Redis
 * (the shared server itself is never touched): every call still gets the store's answer, each costs at most the
 * command timeout, Redis is used again once it is back; and with the database down, only outcomes Redis holds replay.
 */
class RedisOutageIT {

    private static final Duration TIMEOUT = Duration.ofMillis(200);
    private static final Duration RETRY_AFTER = Duration.ofSeconds(1);
    /** What one call may cost beyond the command timeout on a loaded two-core machine. */
    private static final Duration SLACK = Duration.ofMillis(400);

    private TestRedis redis;
    private TcpProxy proxy;
    private final Node.Database database = new Node.Database(new InMemoryIdempotencyStore());
    private final Map<String, AtomicInteger> runs = Node.newRuns();
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void openRedis() throws Exception {
        redis = TestRedis.open();
        proxy = new TcpProxy(redis.uri.getHost(), redis.uri.getPort());
    }

    @AfterEach
    void closeAll() throws Exception {
        if (proxy == null) {
            return; // skipped: no Redis
        }
        for (AutoCloseable c : open) {
            c.close();
        }
        proxy.close();
        redis.close();
    }

    private Node node(String uri) {
        Node node = new Node(RedisPrefilter.wrap(database).uri(uri).secret(TestRedis.SECRET).keyPrefix(redis.prefix)
                .commandTimeout(TIMEOUT).retryAfter(RETRY_AFTER).build(), runs);
        open.add(node);
        return node;
    }

    private Node throughProxy() {
        return node("redis://127.0.0.1:" + proxy.port());
    }

    private void awaitShared(String key) {
        String redisKey = redis.prefix + "{" + HexFormat.of().formatHex(Keys.hash(Node.ORDER.name(), "", key)) + "}";
        await().atMost(Duration.ofSeconds(5)).until(() -> redis.commands().exists(redisKey) == 1);
    }

    /** Calls {@code key} on {@code node}, and checks that the call cost at most the command timeout and the slack. */
    private static String timed(Node node, String key) {
        long start = System.nanoTime();
        String result = node.call(key);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plus(SLACK));
        return result;
    }

    @Test
    void redisKilledMidRunCostsEachCallAtMostTheTimeoutAndTheDatabaseDecides() throws Exception {
        Node node = throughProxy();
        for (int k = 0; k < 10; k++) {
            timed(node, "K-" + k);
            awaitShared("K-" + k);
        }
        assertThat(timed(node, "K-0")).isEqualTo("K-0#1");
        assertThat(node.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);

        proxy.cut();
        for (int k = 0; k < 20; k++) {
            assertThat(timed(node, "K-" + k)).isEqualTo("K-" + k + "#1");
            assertThat(node.lastOutcome()).isEqualTo(k < 10 ? Outcome.REPLAYED : Outcome.EXECUTED);
        }
        assertThat(node.prefilter.failures()).isPositive();

        proxy.restore();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            timed(node, "K-0");
            return node.lastOutcome() == Outcome.REPLAYED_CACHED;
        });
        assertThat(runs).hasSize(20).allSatisfy((key, n) -> assertThat(n).hasValue(1));
    }

    @Test
    void aRedisThatStopsAnsweringCostsOneCommandTimeoutThenIsLeftAlone() throws Exception {
        Node node = throughProxy();
        node.call("K-0");
        awaitShared("K-0");
        assertThat(node.call("K-0")).isEqualTo("K-0#1");
        assertThat(node.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);

        proxy.stall(); // the connection stays open; Redis just does not answer
        long start = System.nanoTime();
        assertThat(node.call("K-0")).isEqualTo("K-0#1");
        Duration first = Duration.ofNanos(System.nanoTime() - start);
        assertThat(node.lastOutcome()).isEqualTo(Outcome.REPLAYED); // the store answered
        assertThat(first).isBetween(TIMEOUT.minusMillis(20), TIMEOUT.plus(SLACK));
        // then Redis is left alone for retryAfter: the next calls do not wait for it at all
        for (int k = 1; k < 5; k++) {
            long each = System.nanoTime();
            assertThat(node.call("K-" + k)).isEqualTo("K-" + k + "#1");
            assertThat(Duration.ofNanos(System.nanoTime() - each)).isLessThan(TIMEOUT);
        }
        proxy.restore();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            node.call("K-0");
            return node.lastOutcome() == Outcome.REPLAYED_CACHED;
        });
    }

    @Test
    void aWrongPortIsRefusedAndTheDatabaseDecidesEveryCall() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        Node node = node("redis://127.0.0.1:" + closedPort);

        assertThat(timed(node, "K-1")).isEqualTo("K-1#1");
        assertThat(timed(node, "K-1")).isEqualTo("K-1#1");
        assertThat(node.lastOutcome()).isEqualTo(Outcome.REPLAYED);
        // past the quiet time (RETRY_AFTER), Redis is tried, and refused, again; every call meanwhile is the store's
        await().atMost(RETRY_AFTER.multipliedBy(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            assertThat(timed(node, "K-1")).isEqualTo("K-1#1");
            assertThat(node.prefilter.failures()).isGreaterThanOrEqualTo(2);
        });
        assertThat(runs.get("K-1")).hasValue(1);
    }

    @Test
    void whileTheDatabaseIsDownOnlyOutcomesRedisHoldsReplayAndNothingNewIsDecided() throws Exception {
        Node a = throughProxy();
        a.call("K-held");
        awaitShared("K-held");
        Node b = throughProxy(); // a node that never saw K-held

        database.down = true;
        assertThat(b.call("K-held")).isEqualTo("K-held#1");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
        assertThatThrownBy(() -> b.call("K-new")).isInstanceOf(IdempotencyStoreException.class)
                .satisfies(e -> assertThat(((IdempotencyStoreException) e).methodRan()).isFalse());
        assertThat(runs).doesNotContainKey("K-new");

        proxy.cut(); // and Redis is down too: nothing holds K-held any more
        assertThatThrownBy(() -> b.call("K-held")).isInstanceOf(IdempotencyStoreException.class);
        assertThat(runs.get("K-held")).hasValue(1);

        database.down = false;
        proxy.restore();
        assertThat(b.call("K-new")).isEqualTo("K-new#1");
    }
}
