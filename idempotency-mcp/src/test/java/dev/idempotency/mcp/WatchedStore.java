package dev.idempotency.mcp;

import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/** A store that counts the reads of duplicates waiting for a running owner, so a test can know they overlapped. */
final class WatchedStore implements IdempotencyStore {

    private final IdempotencyStore delegate;
    final AtomicInteger finds = new AtomicInteger();

    WatchedStore(IdempotencyStore delegate) {
        this.delegate = delegate;
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
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return delegate.renew(keyHash, leaseUntil, newLeaseUntil);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        return delegate.release(keyHash, leaseUntil);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        finds.incrementAndGet();
        return delegate.find(keyHash);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return delegate.markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        return delegate.markNeedsReviewIfStale(keyHash, leaseUntil, now);
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        return delegate.resolve(observed, result, expiresAt);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return delegate.purgeExpired(now, batchSize);
    }
}
