package dev.idempotency.store;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A store that passes every call to another one: the base of a decorator (a cache in front of a store, a circuit
 * breaker, a counter), which overrides what it changes and inherits the rest, the reports included. A decorator
 * written against {@link IdempotencyStore} itself would inherit the reports' defaults, which refuse, instead of its
 * store's answers.
 */
public abstract class ForwardingIdempotencyStore implements IdempotencyStore {

    private final IdempotencyStore delegate;

    /** @param delegate the store every call not overridden goes to */
    protected ForwardingIdempotencyStore(IdempotencyStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The store this one passes its calls to. */
    public final IdempotencyStore delegate() {
        return delegate;
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
}
