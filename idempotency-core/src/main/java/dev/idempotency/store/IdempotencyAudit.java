package dev.idempotency.store;

import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Where {@link dev.idempotency.IdempotencyAdmin} writes down every key resolved by hand: who, when, why, and what the
 * record was before. Only appended to; the admin shows it ({@code history}, {@code resolutions}), and so do the report
 * and the actuator endpoint.
 *
 * <p>Built in: {@link InMemoryIdempotencyAudit} (this JVM, bounded; the admin's default) and, in
 * {@code idempotency-jdbc-store}, {@code JdbcIdempotencyAudit}, a table beside the store's that joins the caller's
 * transaction as the store does, so that a resolution and its entry commit together.
 *
 * <p>Implementations are thread-safe.
 */
public interface IdempotencyAudit {

    /**
     * Appends {@code entry}, the resolution of the key stored as {@code keyHash}. Called after the resolution it
     * records; an exception here reaches the operator (in a transaction it rolls the resolution back with it).
     *
     * @param keyHash the stored identity (operation, scope and key hashed): what {@link #history} looks up
     */
    void append(byte[] keyHash, Entry entry);

    /** The entries of one key, the newest first, at most {@code limit}. */
    List<Entry> history(byte[] keyHash, int limit);

    /** The latest entries of every key, the newest first, at most {@code limit}. */
    List<Entry> recent(int limit);

    /** What an operator did to a record. */
    enum Action {
        /** Resolved as not executed: the record was deleted, the next call runs. */
        RELEASED,
        /** Resolved as executed: the record now replays the result the operator gave. */
        RESOLVED_EXECUTED,
        /** Deleted whatever its state. */
        EVICTED
    }

    /**
     * One resolution.
     *
     * @param operation the operation name
     * @param key       the readable key, as stored (cut to 255 characters)
     * @param tier      the operation's tier
     * @param before    the record's status when it was resolved
     * @param action    what was done
     * @param by        who did it, and why
     * @param at        when
     */
    record Entry(String operation, String key, Tier tier, Status before, Action action, ResolvedBy by, Instant at) {

        public Entry {
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(before, "before");
            Objects.requireNonNull(action, "action");
            Objects.requireNonNull(by, "by");
            Objects.requireNonNull(at, "at");
        }

        @Override
        public String toString() {
            return action + " " + operation + " '" + key + "' (" + tier + ", was " + before + ") by " + by.actor()
                    + " at " + at + ": " + by.reason();
        }
    }
}
