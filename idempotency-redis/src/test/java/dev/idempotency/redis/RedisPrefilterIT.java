package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.ResolvedBy;
import dev.idempotency.TransactionBridge;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The Redis pre-filter on the machine's Redis, as several nodes share it: one node's committed outcome replays on
 * another without the database, each key runs once under many threads on two nodes, an eviction on one node is seen
 * by the other, and nothing uncommitted, unreadable or evicted is ever answered.
 */
class RedisPrefilterIT extends RedisNodesSupport {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");


    private RedisPrefilter.Builder prefilter(dev.idempotency.store.IdempotencyStore store) {
        return RedisPrefilter.wrap(store).uri(redis.url).secret(TestRedis.SECRET).keyPrefix(redis.prefix)
                .commandTimeout(Duration.ofSeconds(1)); // a loaded CI machine must not turn hits into misses here
    }

    private Node node() {
        Node node = new Node(prefilter(database).build(), runs);
        open.add(node);
        return node;
    }

    private static byte[] hash(String key) {
        return Keys.hash(Node.ORDER.name(), "", key);
    }

    private String redisKey(String key) {
        return redis.prefix + "{" + HexFormat.of().formatHex(hash(key)) + "}";
    }

    private void awaitShared(String key) {
        await().atMost(Duration.ofSeconds(5)).until(() -> redis.commands().exists(redisKey(key)) == 1);
    }

    @Test
    void anOutcomeCommittedOnOneNodeReplaysOnAnotherWithoutTheDatabase() {
        Node a = node();
        Node b = node();
        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        awaitShared("K-1");
        int claims = database.claims.get();

        assertThat(b.call("K-1")).isEqualTo("K-1#1");

        assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
        assertThat(database.claims).hasValue(claims);
        assertThat(b.prefilter.hits()).isEqualTo(1);
    }

    @Test
    void theValueIsTheRecordAsJsonWithItsMacUnderThePrefixedHashUntilTheOutcomeExpires() {
        Node a = node();
        a.call("K-1");
        awaitShared("K-1");

        String value = redis.commands().get(redisKey("K-1"));
        // 2.<the MAC, 43 characters of base64url>.<the record as JSON>
        assertThat(value).matches("2\\.[A-Za-z0-9_-]{43}\\.\\{.*").contains("\"format\":2",
                "\"operation\":\"Orders.create\"", "\"key\":\"K-1\"", "\"tier\":\"REVERSIBLE\"")
                .doesNotContain("java.", "@class");
        long ttl = redis.commands().pttl(redisKey("K-1"));
        assertThat(ttl).isBetween(Duration.ofHours(23).toMillis(), Duration.ofHours(24).toMillis());
    }

    @Test
    void manyThreadsOnTwoNodesRunEachKeyOnce() throws Exception {
        Node a = node();
        Node b = node();
        int keys = 40;
        int callsPerKey = 8;
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int round = 0; round < callsPerKey; round++) {
                for (int k = 0; k < keys; k++) {
                    Node node = (round + k) % 2 == 0 ? a : b;
                    String key = "K-" + k;
                    results.add(pool.submit(() -> node.call(key)));
                }
            }
            for (Future<String> f : results) {
                assertThat(f.get()).endsWith("#1");
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).hasSize(keys).allSatisfy((key, n) -> assertThat(n).hasValue(1));
        for (int k = 0; k < keys; k++) {
            awaitShared("K-" + k);
            assertThat(b.call("K-" + k)).isEqualTo("K-" + k + "#1");
            assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
        }
    }

    @Test
    void anEvictionOnOneNodeIsSeenByTheOther() {
        Node a = node();
        Node b = node();
        a.call("K-1");
        awaitShared("K-1");
        assertThat(b.call("K-1")).isEqualTo("K-1#1");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);

        assertThat(IdempotencyAdmin.builder(a.prefilter).build().evict(Node.ORDER.name(), "K-1", BY)).isTrue();

        assertThat(redis.commands().exists(redisKey("K-1"))).isZero();
        assertThat(b.call("K-1")).isEqualTo("K-1#2");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        awaitShared("K-1");
        assertThat(a.call("K-1")).isEqualTo("K-1#2");
    }

    @Test
    void aCopyReadBeforeAnEvictionIsNotWrittenBackAfterIt() {
        Node a = node();
        a.call("K-1");
        awaitShared("K-1");
        IdempotencyRecord before = database.find(hash("K-1")).orElseThrow();
        IdempotencyAdmin.builder(a.prefilter).build().evict(Node.ORDER.name(), "K-1", BY);

        // another node read the record just before the eviction, and shares it just after
        RedisPrefilter late = prefilter(new ForwardingStore(database) {
            @Override
            public Optional<IdempotencyRecord> find(byte[] keyHash) {
                return Optional.of(before);
            }
        }).build();
        open.add(late);
        late.find(hash("K-1"));
        // a later outcome of the same key is still shared: the marker names the evicted outcome only
        Node b = new Node(late, runs);
        b.call("K-2");
        awaitShared("K-2");

        assertThat(redis.commands().exists(redisKey("K-1"))).isZero();
        assertThat(a.call("K-1")).isEqualTo("K-1#2");
        awaitShared("K-1");
    }

    @Test
    void anOutcomeIsSharedOnlyOnceItsTransactionCommits() {
        List<TransactionBridge.CompletionCallback> callbacks = new ArrayList<>();
        boolean[] active = {false};
        TransactionBridge bridge = new TransactionBridge() {
            @Override
            public boolean isTransactionActive() {
                return active[0];
            }

            @Override
            public void afterCompletion(CompletionCallback callback) {
                callbacks.add(callback);
            }
        };
        RedisPrefilter shared = prefilter(database).transactions(bridge).build();
        Node a = new Node(shared, runs);
        open.add(a);

        active[0] = true;
        a.call("K-rolled-back");
        active[0] = false;
        callbacks.forEach(c -> c.completed(TransactionBridge.Completion.ROLLED_BACK));
        callbacks.clear();
        active[0] = true;
        a.call("K-committed");
        active[0] = false;
        callbacks.forEach(c -> c.completed(TransactionBridge.Completion.COMMITTED));

        awaitShared("K-committed");
        assertThat(redis.commands().exists(redisKey("K-rolled-back"))).isZero();
    }

    @Test
    void aValueItCannotReadIsAMissTheDatabaseDecidesAndItIsDeleted() {
        Node a = node();
        a.call("K-1");
        awaitShared("K-1");
        redis.commands().set(redisKey("K-1"), "{\"format\":1,\"keyHash\":\"00\",\"result\":\"forged\"}");
        redis.commands().set(redisKey("K-2"), "not json");
        int claims = database.claims.get();

        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        assertThat(a.lastOutcome()).isEqualTo(Outcome.REPLAYED);
        assertThat(a.call("K-2")).isEqualTo("K-2#1");
        assertThat(a.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        assertThat(database.claims.get()).isEqualTo(claims + 2);
        await().atMost(Duration.ofSeconds(5)).until(() -> !"not json".equals(redis.commands().get(redisKey("K-2"))));
        // a value of format 1 (older versions, no MAC) is a miss, and not counted as rejected: "not json" is
        assertThat(a.prefilter.rejected()).isEqualTo(1);
    }

    @Test
    void aCaffeinePrefilterGoesInFrontAndAnswersFirst() {
        RedisPrefilter shared = prefilter(database).build();
        CaffeinePrefilter local = CaffeinePrefilter.wrap(shared).build();
        Node a = new Node(shared, local, runs);
        open.add(a);
        Node b = node();
        b.call("K-1");
        awaitShared("K-1");

        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        assertThat(a.call("K-1")).isEqualTo("K-1#1");

        assertThat(a.count(Outcome.REPLAYED_CACHED)).isEqualTo(2);
        assertThat(shared.hits()).isEqualTo(1); // the second one never left the node
        assertThatThrownBy(() -> RedisPrefilter.wrap(local).uri(redis.url).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("in front of the RedisPrefilter");
    }

    @Test
    void theBuilderRefusesWhatCannotWork() {
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).secret(TestRedis.SECRET).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("uri(...), cluster(...) or client(...)");
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).uri(redis.url).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("needs a secret")
                .hasMessageContaining("secret(...)");
        String short31 = "0123456789012345678901234567890";
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).secret(short31))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 32 bytes")
                .hasMessageContaining("was 31").hasMessageNotContaining(short31);
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).acceptedSecrets(List.of(TestRedis.SECRET, "short")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("acceptedSecrets[1]");
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).keyPrefix("a b"))
                .hasMessageContaining("keyPrefix").hasMessageContaining("'a b'");
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).commandTimeout(Duration.ZERO))
                .hasMessageContaining("commandTimeout");
        assertThatThrownBy(() -> RedisPrefilter.wrap(database).uri("http://nowhere"))
                .hasMessageContaining("not a Redis URI");
    }
}
