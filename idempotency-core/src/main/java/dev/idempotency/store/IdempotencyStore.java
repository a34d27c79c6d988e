package dev.idempotency.store;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Where claimed keys and their outcomes live. Small on purpose: implement it against a new database and prove it
 * with {@code idempotency-store-tck}, the contract tests every built-in store passes.
 *
 * <p>Every mutating method is atomic on one key. Conditional methods name the state they expect (the claim's lease,
 * which identifies the claim) and report whether it was still there: that is how exactly one of many contenders
 * wins a takeover, and how a stale owner learns that its claim was taken.
 *
 * <p><b>Transactions.</b> A store that can join the caller's transaction (the JDBC store, when a Spring-managed
 * transaction is active on its {@code DataSource}) writes the claim there and answers
 * {@link ClaimResult#acquired(boolean) acquired(true)}; a concurrent claim of the same key then blocks on that
 * uncommitted row, for at most {@link ClaimRequest#lockTimeout()}, and answers with the committed outcome or acquires
 * the key if that transaction rolled back. Otherwise the claim is committed at once as
 * {@link IdempotencyRecord.Status#IN_FLIGHT} with a lease, and a duplicate sees it and waits by polling.
 *
 * <p>Stores never decide replay, mismatch or staleness: they report what they hold and the executor decides.
 * Failures are thrown as unchecked exceptions; the executor wraps them in {@code IdempotencyStoreException}.
 *
 * <p><b>Clocks.</b> The executor computes every instant it hands over from its own clock. Where a store has a clock
 * of its own that every node shares (a database's), the decisions that depend on time ({@link #takeOver},
 * {@link #markNeedsReviewIfStale}, {@link #purgeExpired}) are confirmed against that clock inside the conditional
 * write, so that a node whose clock runs ahead can never take over a live claim or purge a live outcome; a store
 * without one (the in-memory store) uses the instant it is given.
 */
public interface IdempotencyStore {

    /**
     * Inserts {@code request} as an in-flight claim unless a record with its key hash exists. Never throws for a
     * duplicate key and never leaves the caller's transaction unusable because of one.
     *
     * @return acquired, the existing record, or a lock timeout
     */
    ClaimResult claim(ClaimRequest request);

    /**
     * Atomically replaces {@code observed} (a stale claim or an expired result the caller saw) with a new claim from
     * {@code request}, if the stored record is still exactly in the observed state (same status, lease and expiry)
     * and, by the store's clock ({@code request.now()} for a store without one), that state is really over: an
     * {@code IN_FLIGHT} claim whose lease has ended, or a {@code COMPLETED} outcome past its expiry. Of many callers
     * taking over the same observed record, exactly one acquires. A record that vanished meanwhile is claimed as by
     * {@link #claim}.
     *
     * @return acquired, or the record now holding the key (re-read) when another caller won, it changed, or the
     *         store's clock says it is still live (then the record returned equals {@code observed})
     */
    ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed);

    /**
     * Records the result of the claim identified by {@code leaseUntil}: status {@code COMPLETED}, result, expiry.
     *
     * @return false if that claim is no longer there (it was taken over or evicted)
     */
    boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt);

    /**
     * Extends the lease of the in-flight claim identified by {@code leaseUntil} to {@code newLeaseUntil}, so that a
     * call that runs longer than its lease is not taken for a crash. The new lease identifies the claim from then on.
     *
     * @return false if that claim is no longer there (it was taken over, evicted or completed)
     */
    boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil);

    /**
     * Deletes the in-flight claim identified by {@code leaseUntil} (the method failed), so that a retry runs again.
     *
     * @return false if that claim is no longer there
     */
    boolean release(byte[] keyHash, Instant leaseUntil);

    /** Reads the record of a key hash, whatever its status, expired or not. */
    Optional<IdempotencyRecord> find(byte[] keyHash);

    /**
     * Marks the in-flight claim identified by {@code leaseUntil} {@code NEEDS_REVIEW}: its owner ran an irreversible
     * call whose outcome it cannot record (the caller's transaction rolled back after the effect, the method threw,
     * the commit's outcome is unknown). Whatever the time: the owner knows.
     *
     * @return false if the record is no longer that claim
     */
    boolean markNeedsReview(byte[] keyHash, Instant leaseUntil);

    /**
     * Marks the claim identified by {@code leaseUntil} {@code NEEDS_REVIEW} if its lease has ended by the store's
     * clock ({@code now} for a store without one): an irreversible attempt that crashed, seen by another caller.
     *
     * @return false if the record is no longer that claim, or its lease has not ended by the store's clock
     */
    boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now);

    /**
     * An operator's decision for the record {@code observed}, applied only if the stored record is still exactly in
     * the observed state (same status, lease and expiry, as {@link #takeOver} compares them): with a result, it
     * becomes {@code COMPLETED} with that result until {@code expiresAt}; with none, it is deleted (released) so that
     * the next call runs. A record that changed since it was observed (taken over by a new attempt, completed by a
     * slow owner, resolved by another operator) is left untouched: the operator's decision was about a state that
     * no longer exists, and applying it could delete a live claim or a real outcome.
     *
     * @param observed the record as the operator saw it (from {@link #find})
     * @return false if the record is no longer in the observed state, or is gone
     */
    boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt);

    /**
     * Deletes up to {@code batchSize} {@code COMPLETED} records that expired at or before {@code now} (and by the
     * store's own clock, where it has one); never an {@code IN_FLIGHT} or {@code NEEDS_REVIEW} one. Safe to run from
     * several nodes at once.
     *
     * @return how many records were deleted; call again while it returns {@code batchSize}
     */
    int purgeExpired(Instant now, int batchSize);

    // ---- what waits for an operator: reports and meters, never the protocol ----------------------------------------

    /**
     * Counts, per operation, the records that wait for an operator: {@code NEEDS_REVIEW} records, and
     * {@code IN_FLIGHT} claims whose lease ended at or before {@code now} (stuck: their attempt crashed or hangs, and
     * no retry has taken them over or marked them yet). Operations with neither are left out. Meant for reports and
     * periodic gauges, not for every call: a store answers it from an index on the status (the JDBC store's
     * {@code <table>_status_expires_at} index), never by reading every record.
     *
     * <p>{@code now} is the caller's clock (the stuck test is a report, not a decision: no shared clock needed).
     *
     * @return one entry per operation with something waiting, sorted by operation name
     * @throws UnsupportedOperationException if the store cannot count by status (the default)
     */
    default List<Backlog> backlog(Instant now) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot count records by status: implement"
                + " IdempotencyStore.backlog, listNeedsReview and listStuck (the store TCK tests them)");
    }

    /**
     * Up to {@code limit} {@code NEEDS_REVIEW} records, the oldest ({@code createdAt}) first: an operator's work list.
     *
     * @throws UnsupportedOperationException if the store cannot list by status (the default)
     */
    default List<IdempotencyRecord> listNeedsReview(int limit) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list records by status: implement"
                + " IdempotencyStore.backlog, listNeedsReview and listStuck (the store TCK tests them)");
    }

    /**
     * Up to {@code limit} {@code IN_FLIGHT} records whose lease ended at or before {@code now}, the longest stuck (the
     * earliest lease end) first.
     *
     * @throws UnsupportedOperationException if the store cannot list by status (the default)
     */
    default List<IdempotencyRecord> listStuck(Instant now, int limit) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot list records by status: implement"
                + " IdempotencyStore.backlog, listNeedsReview and listStuck (the store TCK tests them)");
    }
}
