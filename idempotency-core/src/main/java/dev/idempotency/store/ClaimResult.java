package dev.idempotency.store;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@link IdempotencyStore#claim} and {@link IdempotencyStore#takeOver}: the caller now owns the key,
 * or the key is held by an existing record, or the store gave up waiting for another transaction's claim.
 */
public final class ClaimResult {

    /** Which of the three answers this is. */
    public enum Kind {
        /** The caller owns the key and runs the method. */
        ACQUIRED,
        /** Another record holds the key: see {@link #record()}. */
        EXISTING,
        /** Another uncommitted transaction holds the key and did not end within the lock timeout. */
        LOCK_TIMEOUT
    }

    private static final ClaimResult ACQUIRED_IN_TRANSACTION = new ClaimResult(Kind.ACQUIRED, null, true, false);
    private static final ClaimResult ACQUIRED_COMMITTED = new ClaimResult(Kind.ACQUIRED, null, false, false);
    private static final ClaimResult LOCK_TIMEOUT = new ClaimResult(Kind.LOCK_TIMEOUT, null, false, false);

    private final Kind kind;
    private final @Nullable IdempotencyRecord record;
    private final boolean transactional;
    private final boolean cached;

    private ClaimResult(Kind kind, @Nullable IdempotencyRecord record, boolean transactional, boolean cached) {
        this.kind = kind;
        this.record = record;
        this.transactional = transactional;
        this.cached = cached;
    }

    /**
     * The caller owns the key.
     *
     * @param transactional true when the claim was written in the caller's still-open transaction (it commits or
     *                      rolls back with it); false when it was committed on its own, protected by its lease
     */
    public static ClaimResult acquired(boolean transactional) {
        return transactional ? ACQUIRED_IN_TRANSACTION : ACQUIRED_COMMITTED;
    }

    /** The key is held by {@code record}, read after the conflict. */
    public static ClaimResult existing(IdempotencyRecord record) {
        return new ClaimResult(Kind.EXISTING, Objects.requireNonNull(record, "record"), false, false);
    }

    /** A completed {@code record} answered from a cache in front of the store (no store access). */
    public static ClaimResult cached(IdempotencyRecord record) {
        if (record.status() != IdempotencyRecord.Status.COMPLETED) {
            throw new IllegalArgumentException("only completed records may be answered from a cache: " + record);
        }
        return new ClaimResult(Kind.EXISTING, record, false, true);
    }

    /** Another transaction's claim was still uncommitted when the lock timeout ran out. */
    public static ClaimResult lockTimeout() {
        return LOCK_TIMEOUT;
    }

    public Kind kind() {
        return kind;
    }

    public boolean isAcquired() {
        return kind == Kind.ACQUIRED;
    }

    /** The record holding the key, for {@link Kind#EXISTING}; null otherwise. */
    public @Nullable IdempotencyRecord record() {
        return record;
    }

    /** For {@link Kind#ACQUIRED}: whether the claim lives in the caller's open transaction. */
    public boolean isTransactional() {
        return transactional;
    }

    /** For {@link Kind#EXISTING}: whether the answer came from a cache rather than the store. */
    public boolean isCached() {
        return cached;
    }

    @Override
    public String toString() {
        return switch (kind) {
            case ACQUIRED -> "ClaimResult[ACQUIRED" + (transactional ? " in transaction]" : " committed]");
            case EXISTING -> "ClaimResult[EXISTING " + record + (cached ? " cached]" : "]");
            case LOCK_TIMEOUT -> "ClaimResult[LOCK_TIMEOUT]";
        };
    }
}
