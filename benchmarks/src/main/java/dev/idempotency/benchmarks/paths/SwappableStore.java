package dev.idempotency.benchmarks.paths;

import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * An in-memory store that a benchmark can empty between iterations (first executions would otherwise fill the heap
 * with millions of keys). One extra virtual call per store operation.
 */
final class SwappableStore implements IdempotencyStore {

    private volatile IdempotencyStore delegate = new InMemoryIdempotencyStore();

    void clear() {
        delegate = new InMemoryIdempotencyStore();
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        return delegate.claim(request);
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        return delegate.takeOver(request, observed);
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        return delegate.complete(keyHash, leaseUntil, result, expiresAt);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        return delegate.release(keyHash, leaseUntil);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        return delegate.find(keyHash);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return delegate.markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean resolve(byte[] keyHash, byte @Nullable [] result, Instant expiresAt) {
        return delegate.resolve(keyHash, result, expiresAt);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return delegate.purgeExpired(now, batchSize);
    }
}
