package dev.idempotency.store.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Layer 4 of the store TCK: many threads at once. Exactly one of many claims of a key acquires it, exactly one of
 * many takeovers of a stale claim wins, two purges at once delete each row once, and a many-thread fuzz through
 * {@link IdempotentExecutor} runs every key exactly once and gives every caller the same result.
 */
public abstract class AbstractStoreConcurrencyTest extends AbstractStoreExpiryTest {

    /** Threads of the fuzz and the races; lower it for a slow store. */
    protected int threads() {
        return 32;
    }

    /** Keys of the fuzz: each thread calls every key, in its own order. */
    protected int fuzzKeys() {
        return 200;
    }

    /** The fuzz's result: who ran, and a decimal and a list to prove the replay is the same value. */
    public record FuzzResult(String key, String runId, BigDecimal amount, List<String> tags) {
    }

    /**
     * Runs {@code task(i)} on {@code n} threads released at the same instant, and returns their results in order.
     * A task's exception fails the test with that exception.
     */
    protected <T> List<T> concurrently(int n, IntFunction<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch ready = new CountDownLatch(n);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int index = i;
                futures.add(pool.submit((Callable<T>) () -> {
                    ready.countDown();
                    go.await();
                    return task.apply(index);
                }));
            }
            assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(120, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void ofManyConcurrentClaimsExactlyOneAcquires() throws Exception {
        List<ClaimResult> results = concurrently(threads(), i ->
                store.claim(request(key("race"), "args", now().plusMillis(i))));
        List<ClaimResult> acquired = results.stream().filter(ClaimResult::isAcquired).toList();
        assertThat(acquired).hasSize(1);
        IdempotencyRecord winner = store.find(keyHash(key("race"))).orElseThrow();
        assertThat(results).filteredOn(r -> !r.isAcquired())
                .allSatisfy(r -> assertThat(r.record()).isEqualTo(winner));
    }

    @Test
    void ofManyConcurrentTakeOversOfAStaleClaimExactlyOneWins() throws Exception {
        ClaimRequest crashed = request(key("stale-race"));
        store.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord observed = store.find(crashed.keyHash()).orElseThrow();
        List<ClaimRequest> contenders = new ArrayList<>();
        for (int i = 0; i < threads(); i++) {
            contenders.add(request(key("stale-race"), "args", now().plusMillis(i)));
        }
        List<ClaimResult> results = concurrently(threads(), i -> store.takeOver(contenders.get(i), observed));
        List<Integer> winners = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i).isAcquired()) {
                winners.add(i);
            }
        }
        assertThat(winners).hasSize(1);
        IdempotencyRecord won = contenders.get(winners.get(0)).toInFlightRecord();
        assertThat(store.find(crashed.keyHash())).contains(won);
        assertThat(results).filteredOn(r -> !r.isAcquired())
                .allSatisfy(r -> assertThat(r.record()).isEqualTo(won));
    }

    @Test
    void twoPurgesAtOnceDeleteEachExpiredRecordOnceAndNothingElse() throws Exception {
        List<ClaimRequest> expired = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            expired.add(completed(key("p-" + i), now().minusSeconds(i % 7)));
        }
        ClaimRequest alive = completed(key("p-alive"), now().plusSeconds(1));
        ClaimRequest inFlight = request(key("p-in-flight"));
        store.claim(inFlight);
        List<Integer> deleted = concurrently(2, i -> {
            int total = 0;
            int batch;
            do {
                batch = store.purgeExpired(now(), 10);
                total += batch;
            } while (batch == 10);
            return total;
        });
        assertThat(deleted.get(0) + deleted.get(1)).isEqualTo(120);
        assertThat(store.purgeExpired(now(), 10)).isZero();
        assertThat(expired).allSatisfy(r -> assertThat(store.find(r.keyHash())).isEmpty());
        assertThat(store.find(alive.keyHash())).isPresent();
        assertThat(store.find(inFlight.keyHash())).isPresent();
    }

    @Test
    void fuzzEveryKeyRunsOnceAndEveryCallerGetsTheSameResult() throws Exception {
        fuzz(Supplier::get);
    }

    /** How one fuzz call is run: as is, or inside an outer transaction. */
    @FunctionalInterface
    protected interface CallWrapper {
        FuzzResult run(Supplier<FuzzResult> call);
    }

    /** The fuzz: {@link #threads()} threads each call all {@link #fuzzKeys()} keys, in a shuffled order. */
    protected void fuzz(CallWrapper wrapper) throws Exception {
        IdempotentExecutor executor = executor();
        IdempotentOperation<FuzzResult> op = IdempotentOperation
                .builder("TCK.fuzz", Tier.REVERSIBLE, ResultType.of(FuzzResult.class))
                .lockTimeout(Duration.ofSeconds(60)).build();
        List<String> keys = new ArrayList<>();
        Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
        Map<String, List<FuzzResult>> results = new ConcurrentHashMap<>();
        for (int k = 0; k < fuzzKeys(); k++) {
            String key = key("fuzz-" + k);
            keys.add(key);
            executions.put(key, new AtomicInteger());
            results.put(key, Collections.synchronizedList(new ArrayList<>()));
        }
        concurrently(threads(), t -> {
            List<String> order = new ArrayList<>(keys);
            Collections.shuffle(order, new Random(t));
            for (String key : order) {
                FuzzResult r = wrapper.run(() -> executor.execute(op, key, new Object[] {key}, () -> {
                    executions.get(key).incrementAndGet();
                    return new FuzzResult(key, UUID.randomUUID().toString(), new BigDecimal("1.10"),
                            List.of("a", key));
                }));
                results.get(key).add(r);
            }
            return null;
        });
        for (String key : keys) {
            assertThat(executions.get(key)).as("executions of %s", key).hasValue(1);
            List<FuzzResult> seen = results.get(key);
            assertThat(seen).as("results of %s", key).hasSize(threads());
            assertThat(seen).as("results of %s", key).containsOnly(seen.get(0));
            assertThat(seen.get(0).key()).isEqualTo(key);
            assertThat(seen.get(0).amount()).hasToString("1.10");
        }
    }
}
