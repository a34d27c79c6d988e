package dev.idempotency.spring.tiers;

import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The JDBC store as the application's {@code IdempotencyStore} bean, with a switch that kills the process between
 * claim and result: while {@link #dying} is set, recording a result or releasing a claim fails, so that an attempt
 * without a transaction leaves its committed claim {@code IN_FLIGHT} and no result, as a crash would. Counts calls.
 */
final class CrashableStore implements IdempotencyStore {

    private final IdempotencyStore delegate;
    final AtomicBoolean dying = new AtomicBoolean();
    final AtomicInteger calls = new AtomicInteger();

    CrashableStore(IdempotencyStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        calls.incrementAndGet();
        return delegate.claim(request);
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        calls.incrementAndGet();
        return delegate.takeOver(request, observed);
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        calls.incrementAndGet();
        dieIfDying();
        return delegate.complete(keyHash, leaseUntil, result, expiresAt);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        calls.incrementAndGet();
        dieIfDying();
        return delegate.release(keyHash, leaseUntil);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        calls.incrementAndGet();
        return delegate.find(keyHash);
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        calls.incrementAndGet();
        return delegate.renew(keyHash, leaseUntil, newLeaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        calls.incrementAndGet();
        return delegate.markNeedsReviewIfStale(keyHash, leaseUntil, now);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        calls.incrementAndGet();
        return delegate.markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        calls.incrementAndGet();
        return delegate.resolve(observed, result, expiresAt);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        calls.incrementAndGet();
        return delegate.purgeExpired(now, batchSize);
    }

    private void dieIfDying() {
        if (dying.get()) {
            throw new IllegalStateException("the process died before the outcome was recorded");
        }
    }
}
