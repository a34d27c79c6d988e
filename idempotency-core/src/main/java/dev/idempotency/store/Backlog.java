package dev.idempotency.store;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What waits for an operator in one operation, as a store counts it ({@link IdempotencyStore#backlog(Instant)}).
 *
 * @param operation          the operation name
 * @param needsReview        how many {@code NEEDS_REVIEW} records it holds: irreversible calls whose outcome nobody
 *                           knows, blocked until an operator resolves them
 * @param oldestNeedsReview  when the oldest of them was first claimed ({@code createdAt}); null when there is none
 * @param stuck              how many {@code IN_FLIGHT} claims whose lease ended at or before the instant asked about:
 *                           attempts that crashed (or hang) and that no retry has taken over or marked yet
 * @param oldestStuckLease   the earliest lease end among them; null when there is none
 */
public record Backlog(String operation, long needsReview, @Nullable Instant oldestNeedsReview, long stuck,
        @Nullable Instant oldestStuckLease) {

    public Backlog {
        Objects.requireNonNull(operation, "operation");
        if (needsReview < 0 || stuck < 0) {
            throw new IllegalArgumentException("counts cannot be negative: " + needsReview + ", " + stuck);
        }
    }

    /** An operation with nothing waiting. */
    public static Backlog empty(String operation) {
        return new Backlog(operation, 0, null, 0, null);
    }

    /** This backlog with the {@code NEEDS_REVIEW} figures of {@code other} added (oldest of both kept). */
    public Backlog plus(Backlog other) {
        return new Backlog(operation, needsReview + other.needsReview, earliest(oldestNeedsReview,
                other.oldestNeedsReview), stuck + other.stuck, earliest(oldestStuckLease, other.oldestStuckLease));
    }

    private static @Nullable Instant earliest(@Nullable Instant a, @Nullable Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || a.isBefore(b) ? a : b;
    }
}
