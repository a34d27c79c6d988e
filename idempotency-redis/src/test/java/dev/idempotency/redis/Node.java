package dev.idempotency.redis;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One application node of the Redis suites: an executor in front of its own {@link RedisPrefilter} (its own
 * connection), over the database every node shares. The method it guards counts its runs per key.
 */
final class Node implements AutoCloseable {

    static final IdempotentOperation<String> ORDER = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).build();

    final RedisPrefilter prefilter;
    final IdempotentExecutor executor;
    final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> runs;

    Node(RedisPrefilter prefilter, Map<String, AtomicInteger> runs) {
        this(prefilter, prefilter, runs);
    }

    Node(RedisPrefilter prefilter, IdempotencyStore front, Map<String, AtomicInteger> runs) {
        this.prefilter = prefilter;
        this.runs = runs;
        this.executor = IdempotentExecutor.builder(front).listener(events::add).maxWaitersPerKey(1024).build();
    }

    /** Creates the order {@code key}: the result names the node-wide run count of that key. */
    String call(String key) {
        return executor.execute(ORDER, key, new Object[] {key},
                () -> key + "#" + runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet());
    }

    /** Creates the order {@code key} from {@code payload} (its fingerprint): the result names the run count of key. */
    String call(String key, String payload) {
        return executor.execute(ORDER, key, new Object[] {payload},
                () -> key + "#" + runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet());
    }

    Outcome lastOutcome() {
        return events.get(events.size() - 1).outcome();
    }

    long count(Outcome outcome) {
        return events.stream().filter(e -> e.outcome() == outcome).count();
    }

    @Override
    public void close() {
        prefilter.close();
    }

    /** The database every node shares: counts the claims that reach it, and can be switched down. */
    static final class Database extends ForwardingStore {
        final AtomicInteger claims = new AtomicInteger();
        volatile boolean down;

        Database(IdempotencyStore store) {
            super(store);
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            if (down) {
                throw new IllegalStateException("connection refused (the database is down)");
            }
            claims.incrementAndGet();
            return super.claim(request);
        }

        @Override
        public java.util.Optional<dev.idempotency.store.IdempotencyRecord> find(byte[] keyHash) {
            if (down) {
                throw new IllegalStateException("connection refused (the database is down)");
            }
            return super.find(keyHash);
        }
    }

    static Map<String, AtomicInteger> newRuns() {
        return new ConcurrentHashMap<>();
    }
}
