package dev.idempotency.cache;

import dev.idempotency.TransactionBridge;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/** Test doubles: a clock that tests move, a store that counts its calls, transactions that tests end. */
final class TestSupport {

    private TestSupport() {
    }

    /** A clock the test moves by hand. */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant start) {
            this.now = start;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /** Passes every call to a store and counts them: the stand-in for counted SQL statements. */
    static class CountingStore implements IdempotencyStore {
        final IdempotencyStore store;
        final AtomicInteger calls = new AtomicInteger();
        final List<String> log = new ArrayList<>();

        CountingStore(IdempotencyStore store) {
            this.store = store;
        }

        int reset() {
            log.clear();
            return calls.getAndSet(0);
        }

        private void count(String what) {
            calls.incrementAndGet();
            log.add(what);
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            count("claim");
            return store.claim(request);
        }

        @Override
        public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
            count("takeOver");
            return store.takeOver(request, observed);
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            count("complete");
            return store.complete(keyHash, leaseUntil, result, expiresAt);
        }

        @Override
        public boolean release(byte[] keyHash, Instant leaseUntil) {
            count("release");
            return store.release(keyHash, leaseUntil);
        }

        @Override
        public Optional<IdempotencyRecord> find(byte[] keyHash) {
            count("find");
            return store.find(keyHash);
        }

        @Override
        public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
            count("renew");
            return store.renew(keyHash, leaseUntil, newLeaseUntil);
        }

        @Override
        public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
            count("markNeedsReviewIfStale");
            return store.markNeedsReviewIfStale(keyHash, leaseUntil, now);
        }

        @Override
        public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
            count("markNeedsReview");
            return store.markNeedsReview(keyHash, leaseUntil);
        }

        @Override
        public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
            count("resolve");
            return store.resolve(observed, result, expiresAt);
        }

        @Override
        public int purgeExpired(Instant now, int batchSize) {
            count("purgeExpired");
            return store.purgeExpired(now, batchSize);
        }
    }

    /** One transaction at a time on any thread, ended by the test. */
    static final class ManualTransactions implements TransactionBridge {
        private boolean active;
        private final List<CompletionCallback> callbacks = new ArrayList<>();

        void begin() {
            if (active) {
                throw new IllegalStateException("already active");
            }
            active = true;
        }

        void commit() {
            end(true);
        }

        void rollback() {
            end(false);
        }

        private void end(boolean committed) {
            active = false;
            List<CompletionCallback> run = new ArrayList<>(callbacks);
            callbacks.clear();
            run.forEach(c -> c.completed(committed ? Completion.COMMITTED : Completion.ROLLED_BACK));
        }

        @Override
        public boolean isTransactionActive() {
            return active;
        }

        @Override
        public void afterCompletion(CompletionCallback callback) {
            if (!active) {
                throw new IllegalStateException("no transaction is active");
            }
            callbacks.add(callback);
        }
    }
}
