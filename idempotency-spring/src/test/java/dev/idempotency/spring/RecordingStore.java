package dev.idempotency.spring;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/** Wraps the store under test: counts calls, and fails on any call while poisoned. */
final class RecordingStore implements IdempotencyStore {

    final IdempotencyStore delegate;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger claimsStarted = new AtomicInteger();
    final AtomicBoolean poisoned = new AtomicBoolean();
    /** For each claim, whether a Spring transaction was active when it was made. */
    final List<Boolean> claimsInTransaction = new CopyOnWriteArrayList<>();

    RecordingStore(IdempotencyStore delegate) {
        this.delegate = delegate;
    }

    private void touch(String what) {
        calls.incrementAndGet();
        if (poisoned.get()) {
            throw new AssertionError("the store must not be touched, but " + what + " was called");
        }
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        touch("claim");
        claimsStarted.incrementAndGet();
        claimsInTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
        return delegate.claim(request);
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        touch("takeOver");
        return delegate.takeOver(request, observed);
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        touch("complete");
        return delegate.complete(keyHash, leaseUntil, result, expiresAt);
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        touch("release");
        return delegate.release(keyHash, leaseUntil);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        touch("find");
        return delegate.find(keyHash);
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        touch("renew");
        return delegate.renew(keyHash, leaseUntil, newLeaseUntil);
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        touch("markNeedsReviewIfStale");
        return delegate.markNeedsReviewIfStale(keyHash, leaseUntil, now);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        touch("markNeedsReview");
        return delegate.markNeedsReview(keyHash, leaseUntil);
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        touch("resolve");
        return delegate.resolve(observed, result, expiresAt);
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        touch("purgeExpired");
        return delegate.purgeExpired(now, batchSize);
    }
}
