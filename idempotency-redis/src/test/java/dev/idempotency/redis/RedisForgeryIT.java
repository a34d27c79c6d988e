package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a Redis writer without the pre-filter's secret can do: cause misses, nothing else. The database (an in-memory
 * store here) holds every key's genuine outcome; the tests rewrite, break or copy what the pre-filter put in Redis,
 * as anyone with write access to Redis can, and the genuine outcome is still what every call gets, from the store,
 * while the value Redis held is gone.
 */
class RedisForgeryIT extends RedisNodesSupport {

    private static final Pattern RESULT = Pattern.compile("\"result\":\"([A-Za-z0-9+/=]*)\"");
    private static final Pattern KEY_HASH = Pattern.compile("\"keyHash\":\"([0-9a-f]*)\"");


    private static final String OTHER_SECRET = "another-secret-of-another-cluster-0123456789";

    private RedisPrefilter.Builder prefilter(IdempotencyStore store, String prefix) {
        return RedisPrefilter.wrap(store).uri(redis.url).secret(TestRedis.SECRET).keyPrefix(prefix)
                .commandTimeout(Duration.ofSeconds(1));
    }

    private Node node(RedisPrefilter.Builder prefilter) {
        Node node = new Node(prefilter.build(), runs);
        open.add(node);
        return node;
    }

    private Node node(IdempotencyStore store, String prefix) {
        return node(prefilter(store, prefix));
    }

    private Node node() {
        return node(database, redis.prefix);
    }

    private static String hex(String key) {
        return HexFormat.of().formatHex(Keys.hash(Node.ORDER.name(), "", key));
    }

    private String redisKey(String prefix, String key) {
        return prefix + "{" + hex(key) + "}";
    }

    private String redisKey(String key) {
        return redisKey(redis.prefix, key);
    }

    private String awaitShared(String redisKey) {
        await().atMost(Duration.ofSeconds(5)).until(() -> redis.commands().exists(redisKey) == 1);
        return redis.commands().get(redisKey);
    }

    /** The value with its result replaced by {@code result}: all a forger has to change, whatever else it holds. */
    private static String withResult(String value, String result) {
        Matcher m = RESULT.matcher(value);
        assertThat(m.find()).as("a result in %s", value).isTrue();
        String encoded = Base64.getEncoder().encodeToString(result.getBytes(StandardCharsets.UTF_8));
        return value.substring(0, m.start(1)) + encoded + value.substring(m.end(1));
    }

    private static String withKeyHash(String value, String hex) {
        Matcher m = KEY_HASH.matcher(value);
        assertThat(m.find()).as("a key hash in %s", value).isTrue();
        return value.substring(0, m.start(1)) + hex + value.substring(m.end(1));
    }

    /** Waits until Redis no longer holds {@code forged} under {@code redisKey} (deleted, or the genuine value). */
    private void awaitGone(String redisKey, String forged) {
        await().atMost(Duration.ofSeconds(5)).until(() -> !forged.equals(redis.commands().get(redisKey)));
    }

    @Test
    void aForgedOutcomeIsNotReplayedTheDatabasesIsAndTheForgeryIsGone() {
        Node a = node();
        Node b = node();
        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        String genuine = awaitShared(redisKey("K-1"));
        String forged = withResult(genuine, "\"K-1#forged\"");
        redis.commands().set(redisKey("K-1"), forged);

        assertThat(b.call("K-1")).isEqualTo("K-1#1");

        assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED);
        assertThat(runs.get("K-1")).hasValue(1);
        assertThat(b.prefilter.rejected()).isEqualTo(1);
        awaitGone(redisKey("K-1"), forged);
        // the store's genuine outcome took the forgery's place, and replays from Redis again
        awaitShared(redisKey("K-1"));
        assertThat(b.call("K-1")).isEqualTo("K-1#1");
        assertThat(b.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
    }

    @Test
    void aValueWhoseResultCannotBeReadIsAMissAndTheDatabaseAnswersEveryRetry() {
        Node a = node();
        a.call("K-1");
        String forged = withResult(awaitShared(redisKey("K-1")), "not json {");
        redis.commands().set(redisKey("K-1"), forged);

        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        assertThat(a.lastOutcome()).isEqualTo(Outcome.REPLAYED);
        assertThat(a.prefilter.rejected()).isEqualTo(1);

        awaitGone(redisKey("K-1"), forged);
        assertThat(a.call("K-1")).isEqualTo("K-1#1");
        assertThat(runs.get("K-1")).hasValue(1);
    }

    @Test
    void aValueCopiedToAnotherKeyIsAMissAndThatKeyRunsItsOwnCall() {
        Node a = node();
        a.call("K-1", "same payload");
        String value = awaitShared(redisKey("K-1"));
        String copied = withKeyHash(value, hex("K-2"));
        redis.commands().set(redisKey("K-2"), copied);

        assertThat(a.call("K-2", "same payload")).isEqualTo("K-2#1");

        assertThat(a.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        assertThat(a.prefilter.rejected()).isEqualTo(1);
        awaitGone(redisKey("K-2"), copied);
    }

    @Test
    void aValueCopiedUnderAnotherPrefixIsAMissAndThatStoreDecides() {
        Node a = node();
        String otherPrefix = redis.prefix + "other:";
        Node other = node(new Node.Database(new InMemoryIdempotencyStore()), otherPrefix);
        a.call("K-1");
        String value = awaitShared(redisKey("K-1"));
        redis.commands().set(redisKey(otherPrefix, "K-1"), value);

        // the other store never ran K-1: it runs now, instead of replaying the first store's outcome
        assertThat(other.call("K-1")).isEqualTo("K-1#2");

        assertThat(other.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        assertThat(other.prefilter.rejected()).isEqualTo(1);
        awaitGone(redisKey(otherPrefix, "K-1"), value);
    }

    @Test
    void aValueSignedWithAnotherSecretIsAMiss() {
        // what a writer who knows the format but not the secret can make: a value of its own, MAC and all
        Node forger = node(prefilter(new Node.Database(new InMemoryIdempotencyStore()), redis.prefix)
                .secret(OTHER_SECRET));
        assertThat(forger.call("K-1")).isEqualTo("K-1#1");
        awaitShared(redisKey("K-1"));
        Node a = node();

        assertThat(a.call("K-1")).isEqualTo("K-1#2");

        assertThat(a.lastOutcome()).isEqualTo(Outcome.EXECUTED);
        assertThat(a.prefilter.rejected()).isEqualTo(1);
    }

    @Test
    void aRotationAcceptsTheOtherSecretWhileNodesMoveFromOneToTheNext() {
        String next = "the-next-secret-of-these-nodes-0123456789ab";
        // step 1: every node still signs with the current secret, and accepts the next
        Node old = node(prefilter(database, redis.prefix).acceptedSecrets(java.util.List.of(next)));
        // step 2: a node signs with the next, and accepts the current (the one it replaces)
        Node moved = node(prefilter(database, redis.prefix).secret(next)
                .acceptedSecrets(java.util.List.of(TestRedis.SECRET)));
        old.call("K-1");
        awaitShared(redisKey("K-1"));
        moved.call("K-2");
        awaitShared(redisKey("K-2"));

        assertThat(moved.call("K-1")).isEqualTo("K-1#1");
        assertThat(moved.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);
        assertThat(old.call("K-2")).isEqualTo("K-2#1");
        assertThat(old.lastOutcome()).isEqualTo(Outcome.REPLAYED_CACHED);

        // step 3: the current secret is dropped; a value it signed is a miss (the store answers), never a failure
        Node done = node(prefilter(database, redis.prefix).secret(next));
        assertThat(done.call("K-1")).isEqualTo("K-1#1");
        assertThat(done.lastOutcome()).isEqualTo(Outcome.REPLAYED);
        assertThat(done.prefilter.rejected()).isEqualTo(1);
        assertThat(runs.get("K-1")).hasValue(1);
    }
}
