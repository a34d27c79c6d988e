package dev.idempotency;

import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Instant;
import java.util.Optional;

/** A store that fails on any use: proves that a path never touches the store. */
final class FailingStore implements IdempotencyStore {

    private static AssertionError touched() {
        return new AssertionError("the store must not be touched");
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        throw touched();
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        throw touched();
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        throw touched();
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        throw touched();
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        throw touched();
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        throw touched();
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        throw touched();
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        throw touched();
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte[] result, Instant expiresAt) {
        throw touched();
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        throw touched();
    }
}
