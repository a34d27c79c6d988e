package dev.idempotency.redis;

import dev.idempotency.TransactionBridge;
import dev.idempotency.internal.OwnClaims;
import dev.idempotency.internal.StoreLayer;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.ForwardingIdempotencyStore;
import dev.idempotency.store.IdempotencyStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.RedisClusterClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A pre-filter on Redis, shared by every node: it answers a claim of a key whose outcome any node has committed from
 * Redis, with no access to the store, and passes every other call through to the store, which alone decides.
 *
 * <pre>{@code
 * RedisPrefilter redis = RedisPrefilter.wrap(CircuitBreakerStore.wrap(jdbcStore).build())
 *     .uri("redis://127.0.0.1:6379")             // a Sentinel: "redis-sentinel://s1:26379,s2:26379#mymaster"
 *     // .cluster("redis://10.0.0.1:6379", "redis://10.0.0.2:6379")  a Redis Cluster, by some of its nodes
 *     .secret(System.getenv("IDEMPOTENCY_REDIS_SECRET"))  // required: shared by every node, 32 bytes or more
 *     .keyPrefix("orders:idempotency:")           // one prefix per store (table) sharing a Redis
 *     .commandTimeout(Duration.ofMillis(50))      // what a slow Redis may cost a call, at most
 *     .transactions(springTransactionBridge)
 *     .build();
 * IdempotencyStore store = CaffeinePrefilter.wrap(redis).transactions(springTransactionBridge).build(); // optional
 * }</pre>
 *
 * <p><b>What it holds.</b> Committed {@code COMPLETED} outcomes only, each under {@code <prefix>{<hex of the key
 * hash>}} (the hash already scopes the key by operation and tenant, as in the store) with a time to live that ends
 * at the record's {@code expiresAt}: an outcome this node completed enters after {@link #complete} succeeds outside
 * a transaction, or after the caller's transaction commits (seen through the {@link TransactionBridge}; never if it
 * rolls back); a completed record read from the store by {@link #claim} or {@link #find} enters on the same terms.
 * Values are the record as a small JSON object ({@code RecordFormat}, Jackson), never Java serialization,
 * authenticated: an HMAC-SHA256 with the {@link Builder#secret secret} the nodes share over the value and the Redis
 * key it is stored under. Writes are sent without waiting for the reply: they cost the call nothing.
 *
 * <p><b>What it answers.</b> A hit is {@link ClaimResult#cached(IdempotencyRecord)} (counted {@code replayed_cached});
 * it never answers "acquired" nor an in-flight state. A value whose MAC does not verify (written without the secret,
 * changed, or copied from another key), that is not in this version's format or does not read back is a miss: it is
 * deleted, counted ({@link #rejected()}) and logged (a warning, at most one a minute), and the store decides. So
 * whoever can write to Redis but has not the secret can cause misses, never a replay of an outcome the store did
 * not record for that key. A value past its expiry by the executor's clock is a miss too. On a miss the store
 * decides, exactly as without a pre-filter.
 *
 * <p><b>When Redis is slow or down.</b> A read waits at most {@link Builder#commandTimeout} (50 ms unless set); a
 * failure (a timeout, a refused or cut connection) is a miss, logged once per outage, and Redis is then left alone
 * for {@link Builder#retryAfter} (1 s unless set): calls go straight to the store without paying the timeout again.
 * Commands are rejected at once, not queued, while the connection is down. So Redis never decides and never blocks:
 * the store does, at most one command timeout later. Outcomes already in Redis keep replaying while the store is
 * down, as long as Redis is up.
 *
 * <p><b>Evictions.</b> An operator's {@link #resolve} of a completed outcome (an {@code IdempotencyAdmin.evict})
 * first removes it from Redis and leaves a marker, until the outcome's own expiry, that keeps a copy read from the
 * store before the eviction from being written back by any node; every node then sees the eviction at once (a
 * {@code CaffeinePrefilter} in front of another node still holds its own copy until its {@code maximumAge}). If
 * Redis cannot be reached, or a master with replicas gets no replica's confirmation of the eviction within half the
 * command timeout (a failover could undo it), the eviction fails and the store is not touched, so a stale copy
 * cannot go on replaying from Redis.
 *
 * <p>Thread-safe. {@link #close()} closes the connection (and the client, if this pre-filter made it).
 */
public final class RedisPrefilter extends ForwardingIdempotencyStore implements AutoCloseable, StoreLayer.Front {

    private static final System.Logger LOG = System.getLogger(RedisPrefilter.class.getName());
    /** Own claims held at most before the ones whose lease is over are dropped (claims never completed). */
    private static final int MAX_OWN_CLAIMS = 10_000;
    /** How long an eviction's marker outlives the evicted outcome's expiry: nodes' clocks disagree. */
    private static final Duration MARKER_MARGIN = Duration.ofMinutes(1);

    private final RedisLink link;
    private final RedisKeys keys;
    private final String prefixText;
    private final Duration commandTimeout;
    private final Clock clock;
    private final RecordFormat format;
    private final OwnClaims own;

    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final Rejections rejections;
    private RedisPrefilter(Builder b) {
        super(b.store);
        this.commandTimeout = b.commandTimeout;
        this.clock = b.clock;
        this.rejections = new Rejections(b.keyPrefix);
        this.format = new RecordFormat(Objects.requireNonNull(b.secret), b.acceptedSecrets);
        this.prefixText = b.keyPrefix;
        this.keys = new RedisKeys(b.keyPrefix);
        String name = "prefix " + b.keyPrefix;
        if (b.client != null) {
            this.link = RedisLink.of(b.client, b.commandTimeout, b.retryAfter, name);
        } else if (b.clusterClient != null) {
            this.link = RedisLink.of(b.clusterClient, b.commandTimeout, b.retryAfter, name);
        } else if (b.uri != null) {
            this.link = RedisLink.single(b.uri, b.commandTimeout, b.retryAfter, name);
        } else {
            this.link = RedisLink.cluster(b.clusterUris, b.commandTimeout, b.retryAfter, name);
        }
        this.own = new OwnClaims(new ConcurrentHashMap<>(), MAX_OWN_CLAIMS, b.transactions, clock, LOG,
                "RedisPrefilter");
    }

    /** Starts a Redis pre-filter in front of {@code store}. */
    public static Builder wrap(IdempotencyStore store) {
        return new Builder(store);
    }


    /** The prefix of every Redis key this pre-filter writes. */
    public String keyPrefix() {
        return prefixText;
    }

    /** Claims answered from Redis since this pre-filter was built. */
    public long hits() {
        return hits.sum();
    }

    /** Claims Redis had no (readable, live) outcome for, and that went to the store. */
    public long misses() {
        return misses.sum();
    }

    /** Redis commands that failed or timed out (each a miss, or a write not made). */
    public long failures() {
        return link.failures();
    }

    /**
     * Values found in Redis that were not authentic outcomes of their key in this version's format (each a miss,
     * and deleted): written or changed without the secret, copied from another key, or written by a node with other
     * secrets. Values of the unauthenticated format 1 that older versions wrote are misses, not counted here.
     */
    public long rejected() {
        return rejections.count();
    }

    /** Answers a completed outcome from Redis; otherwise asks the store, and shares a completed record it answers. */
    @Override
    public ClaimResult claim(ClaimRequest request) {
        IdempotencyRecord hit = read(request.keyHash());
        if (hit != null) {
            return ClaimResult.cached(hit);
        }
        ClaimResult result = delegate().claim(request);
        if (result.isAcquired()) {
            own.own(request, result.isTransactional());
        } else if (result.kind() == ClaimResult.Kind.EXISTING) {
            fillWhenCommitted(Objects.requireNonNull(result.record()));
        }
        return result;
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        ClaimResult result = delegate().takeOver(request, observed);
        if (result.isAcquired()) {
            own.own(request, result.isTransactional());
            if (observed.status() == IdempotencyRecord.Status.COMPLETED) {
                delete(request.keyHash()); // the expired outcome, in case a node's clock still calls it live
            }
        }
        return result;
    }

    /** Records the result; the completed record goes to Redis once it is committed. */
    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        boolean done = delegate().complete(keyHash, leaseUntil, result, expiresAt);
        IdempotencyRecord record = own.completed(keyHash, leaseUntil, done, result, expiresAt);
        if (record != null) {
            fillWhenCommitted(record);
        }
        return done;
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return own.renew(delegate(), keyHash, leaseUntil, newLeaseUntil);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        own.disown(keyHash, leaseUntil);
        return delegate().release(keyHash, leaseUntil);
    }

    /** Always asks the store (an operator, or a waiting duplicate, wants the truth); shares a completed record. */
    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        Optional<IdempotencyRecord> found = delegate().find(keyHash);
        found.ifPresent(this::fillWhenCommitted);
        return found;
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        own.disown(keyHash, leaseUntil);
        return delegate().markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        return delegate().markNeedsReviewIfStale(keyHash, leaseUntil, now);
    }

    /**
     * An operator's decision. A completed outcome is first removed from Redis for every node (and marked, so that no
     * node writes that outcome back), then resolved in the store; other records were never in Redis.
     *
     * @throws IllegalStateException if Redis cannot be reached to remove a completed outcome: nothing was changed
     */
    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        if (observed.status() == IdempotencyRecord.Status.COMPLETED) {
            evict(observed);
        }
        return delegate().resolve(observed, result, expiresAt);
    }

    /** Purges the store; Redis drops its copies by itself, at each outcome's expiry. */
    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return delegate().purgeExpired(now, batchSize);
    }




    /** Closes the connection to Redis, and the client if this pre-filter made it. The store is not closed. */
    @Override
    public void close() {
        link.close();
    }

    /** Internal: shared by every node, behind a node's own pre-filter. */
    @Override
    public StoreLayer storeLayer() {
        return StoreLayer.SHARED_PREFILTER;
    }

    @Override
    public String toString() {
        return "RedisPrefilter[" + (link.isCluster() ? "cluster, " : "") + "prefix " + prefixText + ", timeout "
                + commandTimeout.toMillis() + " ms, in front of " + delegate() + "]";
    }

    // ---- Redis ------------------------------------------------------------------------------------------------------

    /** The live completed outcome Redis holds for a key, or null (a miss, or Redis failed). */
    private @Nullable IdempotencyRecord read(byte[] keyHash) {
        RedisLink.Commands c = link.commands();
        if (c == null) {
            misses.increment();
            return null;
        }
        byte[] redisKey = keys.outcome(keyHash);
        byte[] value;
        try {
            value = c.strings().get(redisKey);
            link.succeeded();
        } catch (RuntimeException e) {
            link.failed("read", e);
            misses.increment();
            return null;
        }
        if (value == null) {
            misses.increment();
            return null;
        }
        IdempotencyRecord record;
        try {
            record = format.decode(redisKey, keyHash, value);
        } catch (RecordFormat.Rejected e) {
            reject(redisKey, value, e);
            misses.increment();
            return null;
        }
        if (record.isExpired(clock.instant())) {
            misses.increment();
            return null;
        }
        hits.increment();
        return record;
    }

    /** Shares a completed record at once when no transaction is active, or after the active one commits. */
    private void fillWhenCommitted(IdempotencyRecord record) {
        own.whenCommitted(record, this::fill);
    }

    /** Writes a completed record until its expiry, unless it was evicted; does not wait for the reply. */
    private void fill(IdempotencyRecord record) {
        long ttl = Duration.between(clock.instant(), record.expiresAt()).toMillis();
        if (ttl <= 0) {
            return;
        }
        RedisLink.Commands c = link.commands();
        if (c == null) {
            return;
        }
        byte[][] both = keys.outcomeAndMarker(record.keyHash());
        try {
            c.asyncScripts().<Long>eval(RedisKeys.FILL, ScriptOutputType.INTEGER, both, format.encode(both[0], record),
                    RecordFormat.identity(record), RedisKeys.ascii(ttl)).whenComplete((written, e) -> {
                        if (e != null) {
                            link.failed("write", e);
                        } else {
                            link.succeeded();
                        }
                    });
        } catch (RuntimeException e) {
            link.failed("write", e);
        }
    }

    /**
     * Deletes a value that is not an authentic outcome of its key (unless a genuine one replaced it meanwhile), counts
     * it and warns, at most once a minute; the store decides the call.
     */
    private void reject(byte[] redisKey, byte[] value, RecordFormat.Rejected why) {
        rejections.rejected(redisKey, why);
        RedisLink.Commands c = link.commands();
        if (c != null) {
            try {
                c.asyncScripts().<Long>eval(RedisKeys.DELETE_IF, ScriptOutputType.INTEGER, new byte[][] {redisKey},
                        value);
            } catch (RuntimeException e) {
                link.failed("delete", e);
            }
        }
    }

    /** Removes a completed outcome for every node and marks it, or throws: an eviction must reach Redis. */
    private void evict(IdempotencyRecord observed) {
        long markFor = Math.max(0, Duration.between(clock.instant(), observed.expiresAt()).toMillis())
                + MARKER_MARGIN.toMillis();
        byte[][] both = keys.outcomeAndMarker(observed.keyHash());
        try {
            link.writeEverywhere(RedisKeys.EVICT, both, RecordFormat.identity(observed), RedisKeys.ascii(markFor));
            link.succeeded();
        } catch (RuntimeException e) {
            link.failed("eviction", e);
            throw new IllegalStateException("cannot remove operation " + observed.operation() + " key '"
                    + observed.key() + "' from the Redis pre-filter (prefix " + prefixText + "): " + e.getMessage()
                    + "; the store was not changed, so that its outcome does not go on replaying from Redis. Retry"
                    + " when Redis is back", e);
        }
    }

    private void delete(byte[] keyHash) {
        RedisLink.Commands c = link.commands();
        if (c != null) {
            try {
                c.asyncKeys().del(keys.outcome(keyHash));
            } catch (RuntimeException e) {
                link.failed("delete", e);
            }
        }
    }

    /** Builds a {@link RedisPrefilter}; {@link #build()} rejects what cannot work. */
    public static final class Builder {
        /** The command timeout unless set: what a slow Redis may cost a call. */
        public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofMillis(50);
        /** How long Redis is left alone after a failure, unless set. */
        public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);
        /** The key prefix unless set. */
        public static final String DEFAULT_KEY_PREFIX = "idempotency:";
        /** The fewest bytes a secret may have: as many as the MAC (RFC 2104 advises no shorter key). */
        public static final int MIN_SECRET_BYTES = 32;

        private final IdempotencyStore store;
        private @Nullable String uri;
        private List<String> clusterUris = List.of();
        private @Nullable RedisClient client;
        private @Nullable RedisClusterClient clusterClient;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration retryAfter = DEFAULT_RETRY_AFTER;
        private TransactionBridge transactions = TransactionBridge.NONE;
        private Clock clock = Clock.systemUTC();
        private byte @Nullable [] secret;
        private List<byte[]> acceptedSecrets = List.of();

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /**
         * Where Redis is, as a Lettuce URI: one Redis ({@code redis://host:6379/0}, {@code rediss://...} for TLS, a
         * password as {@code redis://:secret@host}), or the master a Sentinel names
         * ({@code redis-sentinel://sentinel1:26379,sentinel2:26379/0#mymaster}: the sentinels, then the master's
         * name; the connection follows a failover). The pre-filter makes its own client with the command timeout,
         * commands rejected while disconnected, and closes it in {@link RedisPrefilter#close()}.
         */
        public Builder uri(String uri) {
            check(uri, "uri");
            clear();
            this.uri = uri;
            return this;
        }

        /**
         * A Redis Cluster, by some of its nodes ({@code redis://10.0.0.1:6379}, one URI each; one is enough, more
         * help when one is down): the pre-filter learns the cluster's topology from them, follows a failover and
         * resharding, and reads and writes each key on the master of its slot. Made and closed as with {@link #uri}.
         */
        public Builder cluster(String... seedUris) {
            Objects.requireNonNull(seedUris, "cluster");
            if (seedUris.length == 0) {
                throw new IllegalArgumentException("cluster(...) of the Redis pre-filter needs at least one node URI");
            }
            for (int i = 0; i < seedUris.length; i++) {
                if (check(seedUris[i], "cluster[" + i + "]").getSentinels().size() > 0) {
                    throw new IllegalArgumentException("cluster[" + i + "] of the Redis pre-filter is a Sentinel URI"
                            + " ('" + seedUris[i] + "'): give a Sentinel as uri(...), a cluster's nodes as redis://");
                }
            }
            clear();
            this.clusterUris = List.copyOf(Arrays.asList(seedUris));
            return this;
        }

        private static RedisURI check(@Nullable String uri, String name) {
            Objects.requireNonNull(uri, name);
            try {
                return RedisURI.create(uri);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(name + " of the Redis pre-filter is not a Redis URI: '" + uri
                        + "' (" + e.getMessage() + ")", e);
            }
        }

        private void clear() {
            uri = null;
            clusterUris = List.of();
            client = null;
            clusterClient = null;
        }

        /**
         * A Lettuce client of the application's to connect with (it is not closed by the pre-filter). Give it
         * {@code ClientOptions.DisconnectedBehavior.REJECT_COMMANDS}, or calls made while Redis is down wait for the
         * command timeout in Lettuce's queue.
         */
        public Builder client(RedisClient client) {
            Objects.requireNonNull(client, "client");
            clear();
            this.client = client;
            return this;
        }

        /**
         * A Lettuce cluster client of the application's (not closed by the pre-filter). Give it
         * {@code REJECT_COMMANDS} as above, and topology refresh triggers
         * ({@code ClusterTopologyRefreshOptions.enableAllAdaptiveRefreshTriggers()}), or a failover is seen late.
         */
        public Builder client(RedisClusterClient client) {
            Objects.requireNonNull(client, "client");
            clear();
            this.clusterClient = client;
            return this;
        }

        /**
         * What every Redis key of this pre-filter starts with ({@value #DEFAULT_KEY_PREFIX} unless set): give each
         * store (each table, each application) sharing one Redis its own.
         */
        public Builder keyPrefix(String keyPrefix) {
            Objects.requireNonNull(keyPrefix, "keyPrefix");
            if (keyPrefix.isEmpty() || keyPrefix.length() > 128 || keyPrefix.chars().anyMatch(
                    ch -> Character.isWhitespace(ch) || Character.isISOControl(ch) || ch == '{' || ch == '}')) {
                throw new IllegalArgumentException("keyPrefix of the Redis pre-filter must be 1 to 128 characters"
                        + " without spaces, control characters or braces, was '" + keyPrefix + "'");
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * The most a Redis command may cost a call (50 ms unless set): past it the command counts as failed and the
         * store decides. Applies to the connection this pre-filter opens.
         */
        public Builder commandTimeout(Duration commandTimeout) {
            this.commandTimeout = positive(commandTimeout, "commandTimeout");
            return this;
        }

        /** How long Redis is left alone after a failure (1 s unless set): calls meanwhile go to the store only. */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = positive(retryAfter, "retryAfter");
            return this;
        }

        /** The executor's transaction bridge, so that an outcome is shared only once its transaction commits. */
        public Builder transactions(TransactionBridge transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            return this;
        }

        /**
         * The secret every node sharing this Redis and prefix holds (required): each value is written with an
         * HMAC-SHA256 keyed with it, over the value and its Redis key, and a value whose MAC does not verify is a
         * miss. Its UTF-8 bytes are the key: at least {@value #MIN_SECRET_BYTES}, random (such as
         * {@code openssl rand -base64 32}), kept out of source control. Values are signed with it and verified with it
         * and the {@link #acceptedSecrets accepted secrets}.
         *
         * @throws IllegalArgumentException if it is shorter than {@value #MIN_SECRET_BYTES} bytes
         */
        public Builder secret(String secret) {
            this.secret = secretBytes(secret, "secret");
            return this;
        }

        /**
         * Secrets a value may also be signed with: verified, never used to sign (none unless set). For a rotation:
         * the next secret, before any node signs with it, then the previous one, until no value it signed is left.
         *
         * @throws IllegalArgumentException if one is shorter than {@value #MIN_SECRET_BYTES} bytes
         */
        public Builder acceptedSecrets(List<String> secrets) {
            Objects.requireNonNull(secrets, "acceptedSecrets");
            List<byte[]> bytes = new ArrayList<>();
            for (int i = 0; i < secrets.size(); i++) {
                bytes.add(secretBytes(secrets.get(i), "acceptedSecrets[" + i + "]"));
            }
            this.acceptedSecrets = List.copyOf(bytes);
            return this;
        }

        private static byte[] secretBytes(@Nullable String secret, String name) {
            Objects.requireNonNull(secret, name);
            byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
            if (bytes.length < MIN_SECRET_BYTES) {
                // never the secret itself in a message
                throw new IllegalArgumentException(name + " of the Redis pre-filter must be at least "
                        + MIN_SECRET_BYTES + " bytes (UTF-8), was " + bytes.length + "; make one with"
                        + " openssl rand -base64 32");
            }
            return bytes;
        }

        /** The executor's clock: expiries are judged and times to live computed on it. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public RedisPrefilter build() {
            if (uri == null && clusterUris.isEmpty() && client == null && clusterClient == null) {
                throw new IllegalStateException("the Redis pre-filter needs a Redis: set uri(...), cluster(...) or"
                        + " client(...)");
            }
            StoreLayer.SHARED_PREFILTER.checkWraps(store);
            if (secret == null) {
                throw new IllegalStateException("the Redis pre-filter needs a secret shared by every node: set"
                        + " secret(...), at least " + MIN_SECRET_BYTES + " random bytes (openssl rand"
                        + " -base64 32). Outcomes in Redis are authenticated with it, so that whoever can write to"
                        + " Redis without it can cause misses only, never a forged replay");
            }
            return new RedisPrefilter(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " of the Redis pre-filter must be positive, was " + d);
            }
            return d;
        }
    }
}
