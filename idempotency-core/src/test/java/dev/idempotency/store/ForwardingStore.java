package dev.idempotency.store;

import java.util.List;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** A store that forwards every call: tests override the one they break or count. */
public class ForwardingStore implements IdempotencyStore {

    private final IdempotencyStore delegate;

    public ForwardingStore(IdempotencyStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        return delegate.claim(request);
    }


    @Override
    public List<Backlog> backlog(Instant now) {
        return delegate.backlog(now);
    }

    @Override
    public List<IdempotencyRecord> listNeedsReview(int limit) {
        return delegate.listNeedsReview(limit);
    }

    @Override
    public List<IdempotencyRecord> listStuck(Instant now, int limit) {
        return delegate.listStuck(now, limit);
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
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return delegate.renew(keyHash, leaseUntil, newLeaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        return delegate.markNeedsReviewIfStale(keyHash, leaseUntil, now);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return delegate.markNeedsReview(keyHash, leaseUntil);
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
