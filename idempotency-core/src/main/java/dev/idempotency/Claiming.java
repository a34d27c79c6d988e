package dev.idempotency;

import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import java.time.Instant;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What a caller does next with the store's answer to its claim (or to its read of the key while it waits): the
 * transitions of the claim loop, decided once for every store ({@code docs/engine.md}, "Claiming"). Pure: the
 * executor asks the store, passes the answer here and carries out the step.
 */
final class Claiming {

    private Claiming() {
    }

    /** The next step of a caller. */
    enum Step {
        /** The key is ours: run the method. */
        ACQUIRED,
        /** A completed outcome of these arguments: replay it. */
        REPLAY,
        /**
         * Take the key over (atomically, against the record read): an outcome past its time to live, or a reversible
         * attempt of these arguments whose lease ran out (it crashed).
         */
        TAKE_OVER,
        /** The key holds another payload: refused with {@link IdempotencyKeyReusedException}. */
        KEY_REUSED,
        /** The key is held for review: refused with {@link IdempotencyOutcomeUnknownException}. */
        OUTCOME_UNKNOWN,
        /**
         * An irreversible attempt whose lease ran out: it may have acted, so mark it {@code NEEDS_REVIEW} (if it is
         * still stale) rather than run it twice.
         */
        HOLD_STALE,
        /** Another attempt is in flight: read the key again after a pause. */
        WAIT,
        /** The lock timeout is over (the store's, or ours while waiting): {@link IdempotencyInProgressException}. */
        IN_PROGRESS
    }

    /**
     * The next step.
     *
     * @param answer      the store's answer: acquired, the key's record, or its lock timeout
     * @param now         the executor's clock
     * @param tier        the operation's tier
     * @param fingerprint the fingerprint of this call's arguments
     * @param liveByStore a record that the store's clock says is still live although ours says it is over (a takeover
     *                    or a hold of it found it unchanged): not taken over or held again until we have waited once,
     *                    so that a node whose clock runs ahead never takes over a live claim; null if none
     * @param nanosLeft   what is left of the lock timeout
     */
    static Step next(ClaimResult answer, Instant now, Tier tier, byte[] fingerprint,
            @Nullable IdempotencyRecord liveByStore, long nanosLeft) {
        switch (answer.kind()) {
            case ACQUIRED:
                return Step.ACQUIRED;
            case LOCK_TIMEOUT:
                return Step.IN_PROGRESS;
            default:
                break;
        }
        IdempotencyRecord record = answer.record();
        boolean over = !record.equals(liveByStore);
        boolean samePayload = Arrays.equals(record.fingerprint(), fingerprint);
        if (over && (record.isExpired(now) || (record.isStale(now) && tier == Tier.REVERSIBLE && samePayload))) {
            return Step.TAKE_OVER;
        }
        if (!samePayload) {
            return Step.KEY_REUSED;
        }
        switch (record.status()) {
            case COMPLETED:
                return Step.REPLAY;
            case NEEDS_REVIEW:
                return Step.OUTCOME_UNKNOWN;
            default:
                break;
        }
        if (over && record.isStale(now)) {
            return Step.HOLD_STALE;
        }
        return nanosLeft <= 0 ? Step.IN_PROGRESS : Step.WAIT;
    }

    /**
     * The record live by the store's clock after a takeover or a hold of {@code record}: that record when the store's
     * answer is that very record (its clock says it is live still), otherwise the one known {@code before}.
     */
    static @Nullable IdempotencyRecord liveByStore(IdempotencyRecord record, ClaimResult answer,
            @Nullable IdempotencyRecord before) {
        return !answer.isAcquired() && record.equals(answer.record()) ? record : before;
    }
}
