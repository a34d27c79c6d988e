package dev.idempotency.internal;

import dev.idempotency.TransactionBridge;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * What every pre-filter (a store front that answers completed outcomes: {@code CaffeinePrefilter},
 * {@code RedisPrefilter}) needs beside its own storage: the claims this node holds, so that a successful
 * {@code complete} can build the completed record, and the rule that such a record is handed on only once it is
 * committed (at once outside a transaction, after the commit inside one, never after a rollback). Internal.
 *
 * <p>The claims live in a map the pre-filter gives (Caffeine's own map, bounded and expiring at each lease; or a
 * plain concurrent map, from which claims past their lease are dropped once it holds {@code bound} of them).
 */
public final class OwnClaims {

    /** A claim this node holds, and whether the store wrote it in the caller's transaction. */
    public record OwnClaim(ClaimRequest request, boolean transactional) {
    }

    private final ConcurrentMap<ByteBuffer, OwnClaim> claims;
    private final int bound;
    private final TransactionBridge transactions;
    private final Clock clock;
    private final System.Logger log;
    private final String owner;

    /**
     * @param claims where the claims are kept, by {@link #id key hash}
     * @param bound how many claims are held before those past their lease are dropped ({@code Integer.MAX_VALUE}
     *        when the map bounds itself)
     * @param owner how the pre-filter is built, for the warning when its bridge is missing, e.g.
     *        {@code "CaffeinePrefilter"}
     */
    public OwnClaims(ConcurrentMap<ByteBuffer, OwnClaim> claims, int bound, TransactionBridge transactions,
            Clock clock, System.Logger log, String owner) {
        this.claims = Objects.requireNonNull(claims, "claims");
        this.bound = bound;
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.log = Objects.requireNonNull(log, "log");
        this.owner = Objects.requireNonNull(owner, "owner");
    }

    /** The map key of a key hash: a copy of its own, so that the caller's array may change. */
    public static ByteBuffer id(byte[] keyHash) {
        return ByteBuffer.wrap(keyHash.clone());
    }

    /** Remembers a claim the store granted this node. */
    public void own(ClaimRequest request, boolean transactional) {
        if (claims.size() >= bound) {
            Instant now = clock.instant();
            claims.values().removeIf(c -> !c.request().leaseUntil().isAfter(now));
        }
        claims.put(id(request.keyHash()), new OwnClaim(request, transactional));
    }

    /** Renews the lease in {@code store}; once renewed, this node's claim goes by its new lease. */
    public boolean renew(IdempotencyStore store, byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        boolean renewed = store.renew(keyHash, leaseUntil, newLeaseUntil);
        if (renewed) {
            claims.computeIfPresent(ByteBuffer.wrap(keyHash), (id, c) -> c.request().leaseUntil().equals(leaseUntil)
                    ? new OwnClaim(c.request().withLeaseUntil(newLeaseUntil), c.transactional()) : c);
        }
        return renewed;
    }

    /** Forgets the claim of {@code keyHash} under {@code leaseUntil} (released, or marked for review). */
    public void disown(byte[] keyHash, Instant leaseUntil) {
        claims.computeIfPresent(ByteBuffer.wrap(keyHash), (id, c) -> c.request().leaseUntil().equals(leaseUntil)
                ? null : c);
    }

    /**
     * After the store's {@code complete} of {@code keyHash} under {@code leaseUntil} answered {@code done}: forgets
     * this node's claim, and answers the completed record to hand on once committed, or null (not this node's
     * claim, the store refused, or the store wrote into a transaction this pre-filter cannot see: then a warning).
     */
    public @Nullable IdempotencyRecord completed(byte[] keyHash, Instant leaseUntil, boolean done, byte[] result,
            Instant expiresAt) {
        ByteBuffer id = ByteBuffer.wrap(keyHash);
        OwnClaim claim = claims.get(id);
        if (claim == null || !claim.request().leaseUntil().equals(leaseUntil)) {
            return null;
        }
        claims.remove(id, claim);
        if (!done) {
            return null;
        }
        if (claim.transactional() && !transactions.isTransactionActive()) {
            // the store wrote into a transaction this pre-filter cannot see (no TransactionBridge was given): it
            // cannot know whether that transaction commits, so it must not answer from this record
            log.log(System.Logger.Level.WARNING, "not keeping the outcome of " + claim.request() + " in the "
                    + owner + ": the store joined a transaction this pre-filter cannot see; build it with the"
                    + " executor's TransactionBridge (" + owner + ".wrap(store).transactions(...))");
            return null;
        }
        return claim.request().toInFlightRecord()
                .with(IdempotencyRecord.Status.COMPLETED, result.clone(), null, expiresAt);
    }

    /**
     * Hands a completed record to {@code keep} at once when no transaction is active, or after the active one
     * commits: inside a transaction a record may be this transaction's own uncommitted write, which a rollback would
     * undo. Anything but a completed record with a result is ignored.
     */
    public void whenCommitted(IdempotencyRecord record, Consumer<IdempotencyRecord> keep) {
        if (record.status() != IdempotencyRecord.Status.COMPLETED || record.result() == null) {
            return;
        }
        if (!transactions.isTransactionActive()) {
            keep.accept(record);
            return;
        }
        try {
            transactions.afterCompletion(completion -> {
                if (completion == TransactionBridge.Completion.COMMITTED) {
                    keep.accept(record);
                }
            });
        } catch (RuntimeException e) {
            // the transaction is ending (we are in its completion callbacks): not keeping it is always safe
            log.log(System.Logger.Level.DEBUG, "not keeping " + record + " in the " + owner + ": " + e.getMessage());
        }
    }
}
