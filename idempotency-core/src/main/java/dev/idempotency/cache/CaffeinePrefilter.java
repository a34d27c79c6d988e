package dev.idempotency.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import dev.idempotency.TransactionBridge;
import dev.idempotency.internal.CompletedOutcomes;
import dev.idempotency.internal.OwnClaims;
import dev.idempotency.internal.OwnClaims.OwnClaim;
import dev.idempotency.internal.StoreLayer;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.ForwardingIdempotencyStore;
import dev.idempotency.store.IdempotencyStore;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A store in front of a store: it answers a claim of a key whose outcome this node has seen committed from memory,
 * with no access to the store at all (no SQL), and passes every other call through.
 *
 * <pre>{@code
 * IdempotencyStore store = CaffeinePrefilter.wrap(jdbcStore)
 *     .maximumSize(10_000)
 *     .maximumBytes(64L << 20)
 *     .transactions(springTransactionBridge)
 *     .build();
 * }</pre>
 *
 * <p><b>What it holds.</b> Only {@code COMPLETED} records, and only once they are committed: a record this node
 * completed enters when {@link #complete} succeeds outside a transaction, or after the caller's transaction commits
 * (through the {@link TransactionBridge}; never if it rolls back); a completed record read back from the store by
 * {@link #claim} or {@link #find} enters on the same terms. An entry leaves when its record expires
 * ({@code expiresAt}, on the clock given here, which must be the executor's), when the cache is full
 * (least recently used first), and when this node releases, resolves, takes over or
 * marks the key.
 *
 * <p><b>How full is full.</b> Two bounds hold at once: at most {@link Builder#maximumSize} outcomes, and at most
 * {@link Builder#maximumBytes} bytes of them, each outcome weighed by its stored result plus its key and a fixed
 * overhead per entry. A thousand results of a megabyte take the byte budget (64 MiB unless set), not a gigabyte;
 * ten thousand small ones take the count. (Each entry weighs at least {@code maximumBytes / maximumSize}, so the one
 * weigher Caffeine allows enforces both.)
 *
 * <p><b>What it answers.</b> A hit is {@link ClaimResult#cached(IdempotencyRecord)}. It never answers "acquired" and
 * never any in-flight state: on a miss the wrapped store alone decides. A completed outcome cannot change except by
 * an operator or by expiry, so a hit is what the store would have answered, with one exception: an operator's
 * {@code resolve} on <em>another</em> node is not seen here until the entry expires or {@link Builder#maximumAge}
 * passes. Set {@code maximumAge} if operators evict completed keys and expect every node to see it at once.
 *
 * <p><b>What a hit costs.</b> No store access, and no wait: the executor asks the pre-filter before it builds a claim
 * or takes its turn among this node's callers of the key, so a replay of a cached outcome never queues behind a
 * caller that is asking the store (nor counts towards {@code maxWaitersPerKey}). The executor still hashes the key,
 * fingerprints the arguments and decodes the result, except for a result type the codec knows to be immutable at
 * every depth ({@link dev.idempotency.codec.ResultCodec#decodesImmutable}): the replays of one cached outcome then
 * share one decoded value.
 *
 * <p>Thread-safe.
 */
public final class CaffeinePrefilter extends ForwardingIdempotencyStore implements CompletedOutcomes,
        StoreLayer.Front {

    private static final System.Logger LOG = System.getLogger(CaffeinePrefilter.class.getName());
    private static final int STRIPES = 64;
    /** What an entry costs beyond its result and key: the record, its instants, two hashes, the map's node. */
    static final int ENTRY_OVERHEAD_BYTES = 256;

    private final Clock clock;
    private final @Nullable Duration maximumAge;
    private final Cache<ByteBuffer, IdempotencyRecord> completed;
    /** This node's own claims, by key (expiring at each lease): what {@link #complete} needs. */
    private final Cache<ByteBuffer, OwnClaim> claims;
    private final OwnClaims own;
    /**
     * Bumped after every change this node makes to a key (per stripe of keys): a record read before the change and
     * cached after it is dropped again, so a release or resolve never leaves a stale entry behind.
     */
    private final AtomicLongArray generations = new AtomicLongArray(STRIPES);

    private CaffeinePrefilter(Builder b) {
        super(b.store);
        this.clock = b.clock;
        this.maximumAge = b.maximumAge;
        Ticker ticker = () -> nanos(clock.instant());
        long floor = Math.max(1, Math.min(Integer.MAX_VALUE, b.maximumBytes / b.maximumSize));
        this.completed = Caffeine.newBuilder()
                .maximumWeight(b.maximumBytes)
                .weigher((ByteBuffer id, IdempotencyRecord record) -> (int) Math.max(floor, bytes(record)))
                .ticker(ticker)
                .executor(b.executor)
                .expireAfter(new UntilInstant<IdempotencyRecord>(IdempotencyRecord::expiresAt))
                .build();
        this.claims = Caffeine.newBuilder()
                .maximumSize(b.maximumSize)
                .ticker(ticker)
                .executor(b.executor)
                .expireAfter(new UntilInstant<OwnClaim>(c -> c.request().leaseUntil()))
                .build();
        this.own = new OwnClaims(claims.asMap(), Integer.MAX_VALUE, b.transactions, clock, LOG, "CaffeinePrefilter");
    }

    /** Starts a pre-filter in front of {@code store}. */
    public static Builder wrap(IdempotencyStore store) {
        return new Builder(store);
    }


    /**
     * Answers a completed record this node has seen committed from memory; otherwise asks the store, and remembers
     * a completed record it answers with.
     */
    @Override
    public ClaimResult claim(ClaimRequest request) {
        IdempotencyRecord hit = completed(request.keyHash());
        if (hit != null) {
            return ClaimResult.cached(hit);
        }
        ByteBuffer id = id(request.keyHash());
        long generation = generation(id);
        ClaimResult result = delegate().claim(request);
        remember(id, request, result, generation);
        return result;
    }

    /**
     * The committed, unexpired completed record of {@code keyHash} held here, or null: what {@link #claim} answers
     * from memory (the executor asks this first, before it builds a claim). Internal.
     */
    @Override
    public @Nullable IdempotencyRecord completed(byte[] keyHash) {
        // looked up by the caller's own bytes: only a key that enters a cache needs a copy of its own
        IdempotencyRecord hit = completed.getIfPresent(ByteBuffer.wrap(keyHash));
        return hit != null && !hit.isExpired(clock.instant()) ? hit : null;
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        ByteBuffer id = id(request.keyHash());
        ClaimResult result;
        try {
            result = delegate().takeOver(request, observed);
        } finally {
            changed(id);
        }
        if (result.isAcquired()) {
            own.own(request, result.isTransactional());
        }
        return result;
    }

    /** Records the result; the completed record enters the cache once it is committed. */
    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        ByteBuffer id = id(keyHash);
        long generation = generation(id);
        boolean done = delegate().complete(keyHash, leaseUntil, result, expiresAt);
        IdempotencyRecord record = own.completed(keyHash, leaseUntil, done, result, expiresAt);
        if (record != null) {
            cacheWhenCommitted(id, record, generation);
        }
        return done;
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        ByteBuffer id = id(keyHash);
        try {
            return delegate().release(keyHash, leaseUntil);
        } finally {
            changed(id);
        }
    }

    /** Always asks the store (an operator wants the truth); remembers a completed record it answers with. */
    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        ByteBuffer id = id(keyHash);
        long generation = generation(id);
        Optional<IdempotencyRecord> found = delegate().find(keyHash);
        found.ifPresent(record -> cacheWhenCommitted(id, record, generation));
        return found;
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        ByteBuffer id = id(keyHash);
        try {
            return delegate().markNeedsReview(keyHash, leaseUntil);
        } finally {
            changed(id);
        }
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        ByteBuffer id = id(keyHash);
        try {
            return delegate().markNeedsReviewIfStale(keyHash, leaseUntil, now);
        } finally {
            changed(id);
        }
    }

    /** Renews in the store; this node's own claim then goes by its new lease, so that its outcome is still cached. */
    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return own.renew(delegate(), keyHash, leaseUntil, newLeaseUntil);
    }

    /** Resolves in the store and forgets the key here; the next claim reads the operator's decision. */
    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        ByteBuffer id = id(observed.keyHash());
        try {
            return delegate().resolve(observed, result, expiresAt);
        } finally {
            changed(id);
        }
    }

    /** Purges the store; expired entries have already stopped answering here and are dropped as well. */
    @Override
    public int purgeExpired(Instant now, int batchSize) {
        int removed = delegate().purgeExpired(now, batchSize);
        completed.cleanUp();
        claims.cleanUp();
        return removed;
    }




    /** Forgets every cached outcome (the store is untouched). */
    public void clear() {
        for (int i = 0; i < STRIPES; i++) {
            generations.incrementAndGet(i);
        }
        completed.invalidateAll();
    }

    /** The approximate number of cached outcomes. */
    public long cachedOutcomes() {
        return completed.estimatedSize();
    }

    /** Internal: this node's memory, in front of every other store front. */
    @Override
    public StoreLayer storeLayer() {
        return StoreLayer.NODE_PREFILTER;
    }

    /**
     * What one cached outcome costs in memory, near enough: its result, its readable key and operation (UTF-16), and
     * {@value #ENTRY_OVERHEAD_BYTES} bytes for the rest.
     */
    static long bytes(IdempotencyRecord record) {
        byte[] result = record.result();
        return (long) (result == null ? 0 : result.length) + 2L * record.key().length()
                + 2L * record.operation().length() + ENTRY_OVERHEAD_BYTES;
    }

    /** The bytes of the outcomes cached now, as the budget counts them (for tests and diagnostics). */
    long cachedBytes() {
        return completed.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
    }

    /** Whether an outcome for {@code keyHash} is cached (for tests and diagnostics). */
    boolean isCached(byte[] keyHash) {
        return completed.getIfPresent(id(keyHash)) != null;
    }

    void cleanUp() {
        completed.cleanUp();
        claims.cleanUp();
    }

    private void remember(ByteBuffer id, ClaimRequest request, ClaimResult result, long generation) {
        if (result.isAcquired()) {
            own.own(request, result.isTransactional());
        } else if (result.kind() == ClaimResult.Kind.EXISTING) {
            cacheWhenCommitted(id, Objects.requireNonNull(result.record()), generation);
        }
    }

    /**
     * Caches a completed record at once when no transaction is active, or after the active one commits: inside a
     * transaction a record may be this transaction's own uncommitted write, which a rollback would undo.
     */
    private void cacheWhenCommitted(ByteBuffer id, IdempotencyRecord record, long generation) {
        own.whenCommitted(record, committed -> cache(id, committed, generation));
    }

    private void cache(ByteBuffer id, IdempotencyRecord record, long generation) {
        Instant now = clock.instant();
        if (record.isExpired(now)) {
            return;
        }
        completed.put(id, record);
        if (generation(id) != generation) {
            // the key changed on this node while the record was read or its transaction ran: it may be stale
            completed.invalidate(id);
        }
    }

    private void changed(ByteBuffer id) {
        generations.incrementAndGet(stripe(id));
        completed.invalidate(id);
        claims.invalidate(id);
    }

    private long generation(ByteBuffer id) {
        return generations.get(stripe(id));
    }

    private static int stripe(ByteBuffer id) {
        return id.get(0) & (STRIPES - 1);
    }

    private static ByteBuffer id(byte[] keyHash) {
        return OwnClaims.id(keyHash);
    }

    private static long nanos(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    }

    /** Expires each entry at an instant it carries, capped by {@code maximumAge}. */
    private final class UntilInstant<V> implements Expiry<ByteBuffer, V> {
        private final Function<V, Instant> until;

        UntilInstant(Function<V, Instant> until) {
            this.until = until;
        }

        private long left(V value, long currentTime) {
            long nanos = Math.max(0, nanos(until.apply(value)) - currentTime);
            return maximumAge == null ? nanos : Math.min(nanos, maximumAge.toNanos());
        }

        @Override
        public long expireAfterCreate(ByteBuffer key, V value, long currentTime) {
            return left(value, currentTime);
        }

        @Override
        public long expireAfterUpdate(ByteBuffer key, V value, long currentTime, long currentDuration) {
            return left(value, currentTime);
        }

        @Override
        public long expireAfterRead(ByteBuffer key, V value, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    /** Builds a {@link CaffeinePrefilter}; {@link #build()} rejects what cannot work. */
    public static final class Builder {
        /** The default byte budget of cached outcomes: 64 MiB. */
        public static final long DEFAULT_MAXIMUM_BYTES = 64L << 20;

        private final IdempotencyStore store;
        private long maximumSize = 10_000;
        private long maximumBytes = DEFAULT_MAXIMUM_BYTES;
        private TransactionBridge transactions = TransactionBridge.NONE;
        private Clock clock = Clock.systemUTC();
        private @Nullable Duration maximumAge;
        private Executor executor = Runnable::run;

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** How many outcomes are held at most (least recently used leave first); 10,000 unless set. */
        public Builder maximumSize(long maximumSize) {
            if (maximumSize <= 0) {
                throw new IllegalArgumentException("maximumSize of the pre-filter must be positive, was "
                        + maximumSize);
            }
            this.maximumSize = maximumSize;
            return this;
        }

        /**
         * How many bytes of outcomes are held at most (least recently used leave first), each weighed by its stored
         * result, its key and a fixed overhead; {@value #DEFAULT_MAXIMUM_BYTES} (64 MiB) unless set. An outcome larger
         * than the whole budget is not kept at all (the store answers it).
         */
        public Builder maximumBytes(long maximumBytes) {
            if (maximumBytes <= 0) {
                throw new IllegalArgumentException("maximumBytes of the pre-filter must be positive, was "
                        + maximumBytes);
            }
            this.maximumBytes = maximumBytes;
            return this;
        }

        /**
         * How the caller's transaction is seen, so that an outcome enters only after it commits. Must be the bridge
         * the executor uses. Without one ({@link TransactionBridge#NONE}), every write is taken as committed at once:
         * right only when no store write ever joins a transaction.
         */
        public Builder transactions(TransactionBridge transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            return this;
        }

        /** The clock records' instants are compared with: the executor's clock. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The longest an outcome stays cached, however long its record lives: bounds how long an operator's
         * {@code resolve} on another node goes unseen here. Unset: until the record expires.
         */
        public Builder maximumAge(Duration maximumAge) {
            Objects.requireNonNull(maximumAge, "maximumAge");
            if (maximumAge.isNegative() || maximumAge.isZero()) {
                throw new IllegalArgumentException("maximumAge of the pre-filter must be positive, was " + maximumAge);
            }
            this.maximumAge = maximumAge;
            return this;
        }

        /** Where Caffeine runs its maintenance; the calling thread unless set (deterministic, cheap). */
        Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        public CaffeinePrefilter build() {
            StoreLayer.NODE_PREFILTER.checkWraps(store);
            return new CaffeinePrefilter(this);
        }
    }
}
