package dev.idempotency;

import dev.idempotency.internal.Keys;
import java.time.Duration;

/**
 * What happened to one call, as published to every {@link IdempotencyListener}.
 *
 * @param operation the operation name
 * @param tier      its tier
 * @param key       the readable key (cut to 255 characters); empty for {@link Tier#READ_ONLY}. A refused key (a
 *                  {@code FAILED} event) comes with every character a key may not hold escaped as in Java
 *                  source (a newline as backslash, u000A), so that a listener that logs it cannot be made to forge a log line
 * @param outcome   what happened
 * @param claimTime how long the store claim took (zero when there was none)
 * @param totalTime how long the whole call took, method included
 */
public record IdempotencyEvent(String operation, Tier tier, String key, Outcome outcome, Duration claimTime,
        Duration totalTime) {

    /** Escapes what a key may not hold, whoever built the event: a listener never sees a refused key raw. */
    public IdempotencyEvent {
        key = Keys.escape(key);
    }

    /** The outcome of one call. Names are the metric tag values, in lower case. */
    public enum Outcome {
        /** The method ran and its result (or a declared replayable exception) was recorded. */
        EXECUTED,
        /**
         * A recorded result was returned (or a recorded exception thrown again) from the store; the method did not
         * run.
         */
        REPLAYED,
        /** A recorded result was returned from a cache in front of the store; no store access. */
        REPLAYED_CACHED,
        /** Another attempt was still in flight past the lock timeout. */
        IN_PROGRESS,
        /** The key was used with other arguments. */
        KEY_REUSED,
        /** An irreversible call's outcome is unknown and needs review. */
        OUTCOME_UNKNOWN,
        /** The method, the key, the store or the codec failed; nothing was recorded. */
        FAILED,
        /**
         * The method ran and returned inside a transaction that then rolled back (or the savepoint it ran under):
         * nothing was recorded, and a retry runs again ({@link Tier#IRREVERSIBLE}: the key is held for review).
         */
        ROLLED_BACK,
        /** A confirmation gate refused the first execution. */
        CONFIRMATION_REQUIRED,
        /**
         * The store was unavailable and the operation declared {@link StoreDown#PROCEED_UNGUARDED}: the method ran
         * without the protection of its key (or ran, and its outcome could not be recorded), and nothing was recorded.
         */
        UNGUARDED;

        /** The lower-case name used as a metric tag. */
        public String tagValue() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
