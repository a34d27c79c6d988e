package dev.idempotency.store;

import dev.idempotency.Tier;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What {@link IdempotencyStore#claim} is asked to insert. The executor computes every instant from its own clock
 * (truncated to milliseconds, which every supported database stores exactly), so a store needs no clock of its own.
 *
 * @param keyHash     the 32-byte identity of the key
 * @param operation   the operation name
 * @param key         the readable key, at most 255 characters
 * @param fingerprint the 32-byte fingerprint of the call's arguments
 * @param tier        the operation's tier
 * @param now         the current instant: {@code createdAt} of a new row
 * @param leaseUntil  the lease of the new claim: its owner must complete before it, or the claim becomes stale
 * @param expiresAt   the expiry written with the claim (replaced when the result is recorded)
 * @param lockTimeout how long the store may block on a claim held by another uncommitted transaction
 */
public record ClaimRequest(
        byte[] keyHash,
        String operation,
        String key,
        byte[] fingerprint,
        Tier tier,
        Instant now,
        Instant leaseUntil,
        Instant expiresAt,
        Duration lockTimeout) {

    public ClaimRequest {
        Objects.requireNonNull(keyHash, "keyHash");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(tier, "tier");
        Objects.requireNonNull(now, "now");
        Objects.requireNonNull(leaseUntil, "leaseUntil");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Objects.requireNonNull(lockTimeout, "lockTimeout");
        if (keyHash.length != 32 || fingerprint.length != 32) {
            throw new IllegalArgumentException("keyHash and fingerprint must be 32 bytes (SHA-256)");
        }
    }

    /** The record this request stands for once it is inserted: {@code IN_FLIGHT}, no result. */
    public IdempotencyRecord toInFlightRecord() {
        return new IdempotencyRecord(keyHash, operation, key, fingerprint, tier, IdempotencyRecord.Status.IN_FLIGHT,
                null, leaseUntil, now, expiresAt);
    }

    /** The same claim under a renewed lease ({@link IdempotencyStore#renew}). */
    public ClaimRequest withLeaseUntil(Instant newLeaseUntil) {
        return new ClaimRequest(keyHash, operation, key, fingerprint, tier, now, newLeaseUntil, expiresAt, lockTimeout);
    }

    @Override
    public String toString() {
        return "ClaimRequest[" + operation + " '" + key + "' " + HexFormat.of().formatHex(keyHash) + "]";
    }
}
