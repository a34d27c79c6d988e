package dev.idempotency.store;

import dev.idempotency.store.IdempotencyRecord.Status;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A store in this JVM's memory: for tests and single-process programs. It never joins a transaction: a claim is
 * committed at once with its lease, and the executor defers the result to the caller's commit when there is one.
 * Nothing survives a restart.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {

    private final Map<ByteBuffer, IdempotencyRecord> records = new ConcurrentHashMap<>();

    private static ByteBuffer id(byte[] keyHash) {
        return ByteBuffer.wrap(keyHash.clone());
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        IdempotencyRecord fresh = request.toInFlightRecord();
        IdempotencyRecord current = records.putIfAbsent(id(request.keyHash()), fresh);
        return current == null ? ClaimResult.acquired(false) : ClaimResult.existing(current);
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        AtomicBoolean won = new AtomicBoolean();
        IdempotencyRecord current = records.compute(id(request.keyHash()), (k, existing) -> {
            if (existing == null || (sameState(existing, observed)
                    && (existing.isStale(request.now()) || existing.isExpired(request.now())))) {
                won.set(true);
                return request.toInFlightRecord();
            }
            return existing;
        });
        return won.get() ? ClaimResult.acquired(false) : ClaimResult.existing(current);
    }

    private static boolean sameState(IdempotencyRecord a, IdempotencyRecord b) {
        return a.status() == b.status()
                && Objects.equals(a.leaseUntil(), b.leaseUntil())
                && a.expiresAt().equals(b.expiresAt());
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        return ifClaim(keyHash, leaseUntil, r -> r.with(Status.COMPLETED, result.clone(), null, expiresAt));
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return ifClaim(keyHash, leaseUntil, r -> r.with(Status.IN_FLIGHT, null, newLeaseUntil, r.expiresAt()));
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        return ifClaim(keyHash, leaseUntil, r -> null);
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return ifClaim(keyHash, leaseUntil, r -> r.with(Status.NEEDS_REVIEW, null, r.leaseUntil(), r.expiresAt()));
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        return !leaseUntil.isAfter(now) && markNeedsReview(keyHash, leaseUntil);
    }

    private boolean ifClaim(byte[] keyHash, Instant leaseUntil,
            java.util.function.UnaryOperator<IdempotencyRecord> change) {
        AtomicBoolean done = new AtomicBoolean();
        records.computeIfPresent(id(keyHash), (k, r) -> {
            if (r.status() == Status.IN_FLIGHT && leaseUntil.equals(r.leaseUntil())) {
                done.set(true);
                return change.apply(r);
            }
            return r;
        });
        return done.get();
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        return Optional.ofNullable(records.get(ByteBuffer.wrap(keyHash)));
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        Objects.requireNonNull(observed, "observed");
        Objects.requireNonNull(expiresAt, "expiresAt");
        AtomicBoolean done = new AtomicBoolean();
        records.computeIfPresent(id(observed.keyHash()), (k, r) -> {
            if (!sameState(r, observed)) {
                return r;
            }
            done.set(true);
            return result == null ? null : r.with(Status.COMPLETED, result.clone(), null, expiresAt);
        });
        return done.get();
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        int removed = 0;
        Iterator<Map.Entry<ByteBuffer, IdempotencyRecord>> it = records.entrySet().iterator();
        while (it.hasNext() && removed < batchSize) {
            Map.Entry<ByteBuffer, IdempotencyRecord> e = it.next();
            IdempotencyRecord r = e.getValue();
            if (r.isExpired(now) && records.remove(e.getKey(), r)) {
                removed++;
            }
        }
        return removed;
    }

    @Override
    public List<Backlog> backlog(Instant now) {
        Map<String, Backlog> byOperation = new TreeMap<>();
        for (IdempotencyRecord r : records.values()) {
            Backlog one;
            if (r.status() == IdempotencyRecord.Status.NEEDS_REVIEW) {
                one = new Backlog(r.operation(), 1, r.createdAt(), 0, null);
            } else if (r.isStale(now)) {
                one = new Backlog(r.operation(), 0, null, 1, r.leaseUntil());
            } else {
                continue;
            }
            byOperation.merge(r.operation(), one, Backlog::plus);
        }
        return List.copyOf(byOperation.values());
    }

    @Override
    public List<IdempotencyRecord> listNeedsReview(int limit) {
        return records.values().stream().filter(r -> r.status() == IdempotencyRecord.Status.NEEDS_REVIEW)
                .sorted(Comparator.comparing(IdempotencyRecord::createdAt)).limit(positive(limit)).toList();
    }

    @Override
    public List<IdempotencyRecord> listStuck(Instant now, int limit) {
        return records.values().stream().filter(r -> r.isStale(now))
                .sorted(Comparator.comparing(IdempotencyRecord::leaseUntil)).limit(positive(limit)).toList();
    }

    private static int positive(int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        return limit;
    }

    /** How many records are held, whatever their status. */
    public int size() {
        return records.size();
    }
}
