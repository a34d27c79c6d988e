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
 * <p>Beside the resolutions, an audit may keep the <b>attempts</b> that met a key in trouble ({@link Attempt}): a
 * retry refused because the key is in flight, held for review or claimed with other arguments, a stale claim taken
 * over, a key held for review. The executor appends them when it is given this audit
 * ({@code IdempotentExecutor.Builder.attempts}); a plain first run and a replay are never recorded, so the calls
 * that go well write nothing here. Both methods have defaults that keep nothing, so that an audit written before
 * them still compiles and works.
 *
 * <p>Implementations are thread-safe.
 */
public interface IdempotencyAudit {

    /** How many attempts an audit keeps of one key: the first ones, which show how it got into trouble. */
    int ATTEMPTS_KEPT = 50;

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

    /**
     * Appends {@code attempt}, one attempt that met the key stored as {@code keyHash}, unless the key has
     * {@value #ATTEMPTS_KEPT} already. Called by the executor on the attempt's thread: outside the caller's transaction
     * for a refusal or a hold (which must survive the caller's rollback), in it for a takeover made in it (which
     * rolls back with it). The default keeps nothing.
     *
     * @throws RuntimeException if it cannot be written: the executor logs it and the call goes on as if recorded
     */
    default void attempt(byte[] keyHash, Attempt attempt) {
    }

    /** The attempts kept of one key, the oldest first, at most {@code limit}. The default: none. */
    default List<Attempt> attempts(byte[] keyHash, int limit) {
        return List.of();
    }

    /**
     * One attempt that met a key in trouble, as the executor saw it.
     *
     * @param operation the operation name
     * @param key       the readable key, as stored (cut to 255 characters)
     * @param tier      the operation's tier
     * @param met       the record's status the attempt met ({@link Status#IN_FLIGHT} for one refused while others
     *                  waited, without reading it)
     * @param kind      what the attempt got
     * @param detail    what a person needs besides (the digests of a payload mismatch, the lease that ran out, the
     *                  exception that left the key held), at most 1,000 characters
     * @param at        when, on the executor's clock
     */
    record Attempt(String operation, String key, Tier tier, Status met, Kind kind, String detail, Instant at) {

        /** The longest {@link #detail} kept; longer ones are cut. */
        public static final int MAX_DETAIL = 1000;

        public Attempt {
            Objects.requireNonNull(operation, "operation");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(met, "met");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(at, "at");
            detail = detail.length() > MAX_DETAIL ? detail.substring(0, MAX_DETAIL) : detail;
        }

        /** What an attempt got. */
        public enum Kind {
            /**
             * Refused: another attempt held the key in flight past the lock timeout. (A caller refused at once because
             * too many callers of the key wait on its node is not recorded: that refusal sheds load.)
             */
            REFUSED_IN_PROGRESS,
            /** Refused: the key is held for review, its outcome unknown. */
            REFUSED_HELD,
            /** Refused: the key was claimed with other arguments (a payload mismatch: the key reused). */
            KEY_REUSED,
            /** Took over a reversible claim whose lease had run out (its attempt crashed), and ran again. */
            TOOK_OVER_STALE,
            /** Found an irreversible claim whose lease had run out, and held it for review rather than run again. */
            HELD_STALE,
            /** Its own irreversible attempt may have acted without a recorded outcome: held for review. */
            HELD_FOR_REVIEW
        }

        @Override
        public String toString() {
            return kind + " " + operation + " '" + key + "' (" + tier + ", met " + met + ") at " + at
                    + (detail.isEmpty() ? "" : ": " + detail);
        }
    }

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
