package dev.idempotency.store;

import dev.idempotency.Tier;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One claimed key as a store holds it: one row of the JDBC table.
 *
 * @param keyHash     SHA-256 of (operation, scope, NFC key): the identity, 32 bytes
 * @param operation   the operation name the key belongs to
 * @param key         the readable key, cut to 255 characters (for people, never for matching)
 * @param fingerprint SHA-256 of the canonical arguments of the call that claimed the key
 * @param tier        the tier of the operation
 * @param status      where the call is
 * @param result      the encoded result, present once {@link Status#COMPLETED}
 * @param leaseUntil  until when an {@link Status#IN_FLIGHT} claim is protected; it also identifies the claim, so that
 *                    only its owner completes or releases it
 * @param createdAt   when the key was first claimed
 * @param expiresAt   after this instant the record is no longer replayed and may be purged
 */
public record IdempotencyRecord(
        byte[] keyHash,
        String operation,
        String key,
        byte[] fingerprint,
        Tier tier,
        Status status,
        byte @Nullable [] result,
        @Nullable Instant leaseUntil,
        Instant createdAt,
        Instant expiresAt) {

    /** Where a claimed call is. */
    public enum Status {
        /** Claimed, running (or crashed: then its lease runs out). */
        IN_FLIGHT,
        /** Finished; its result is replayed until it expires. */
        COMPLETED,
        /** An irreversible call whose outcome is unknown: blocked until an operator resolves it. */
        NEEDS_REVIEW
    }

    public IdempotencyRecord {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }

    /** True when an in-flight claim's lease ran out at {@code now} without an outcome: the attempt crashed. */
    public boolean isStale(Instant now) {
        return status == Status.IN_FLIGHT && leaseUntil != null && !leaseUntil.isAfter(now);
    }

    /** True when a completed record is past its time to live at {@code now}: it no longer replays. */
    public boolean isExpired(Instant now) {
        return status == Status.COMPLETED && !expiresAt.isAfter(now);
    }

    /** A copy with other status, result, lease and expiry. */
    public IdempotencyRecord with(Status newStatus, byte @Nullable [] newResult, @Nullable Instant newLeaseUntil,
            Instant newExpiresAt) {
        return new IdempotencyRecord(keyHash, operation, key, fingerprint, tier, newStatus, newResult, newLeaseUntil,
                createdAt, newExpiresAt);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotencyRecord r
                && Arrays.equals(keyHash, r.keyHash)
                && operation.equals(r.operation)
                && key.equals(r.key)
                && Arrays.equals(fingerprint, r.fingerprint)
                && tier == r.tier
                && status == r.status
                && Arrays.equals(result, r.result)
                && Objects.equals(leaseUntil, r.leaseUntil)
                && createdAt.equals(r.createdAt)
                && expiresAt.equals(r.expiresAt);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(keyHash);
    }

    @Override
    public String toString() {
        return "IdempotencyRecord[" + operation + " '" + key + "' " + HexFormat.of().formatHex(keyHash) + " " + status
                + " leaseUntil=" + leaseUntil + " expiresAt=" + expiresAt + "]";
    }
}
