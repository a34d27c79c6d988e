package dev.idempotency;

/**
 * What becomes of a claim the executor owns once its call has ended: the one rule "an {@link Tier#IRREVERSIBLE}
 * call that may have acted is held for review, anything else that has no outcome is released", written once. Pure:
 * the executor decides the inputs and carries out the answer ({@code docs/engine.md}, "Settling").
 */
final class Settling {

    private Settling() {
    }

    /** How the call ended, as far as its claim is concerned. */
    enum Ending {
        /**
         * The call has an outcome to keep (the method returned, or threw a declared replayable exception) and no
         * transaction stands between it and its record any more: there is none, the claim joined it, or it committed.
         */
        OUTCOME,
        /** No outcome: the method threw, its result could not be encoded, or the confirmation gate refused. */
        FAILED,
        /** The caller's transaction, or the savepoint the call ran under, rolled back after the method returned. */
        ROLLED_BACK,
        /** The caller's transaction was sent to commit and its outcome is unknown: the writes may be there. */
        COMMIT_UNKNOWN;

        /** The ending of a call whose outcome waited for the caller's transaction to end as {@code completion}. */
        static Ending of(TransactionBridge.Completion completion) {
            return switch (completion) {
                case COMMITTED -> OUTCOME;
                case ROLLED_BACK -> ROLLED_BACK;
                case UNKNOWN -> COMMIT_UNKNOWN;
            };
        }
    }

    /** What is done with the claim. */
    enum Settlement {
        /** The outcome is written as the key's record, replayed until it expires. */
        RECORD,
        /** The key is given back: a retry runs the call again. */
        RELEASE,
        /** The key is blocked as {@code NEEDS_REVIEW} until an operator resolves it: a retry could act twice. */
        HOLD_FOR_REVIEW,
        /**
         * Nothing is written: the claim stays in flight until its lease ends, then the tier's stale rule applies
         * (the writes of a reversible call may have committed, so its key is neither released nor recorded).
         */
        LEAVE_IN_FLIGHT
    }

    /**
     * The settlement of a claim.
     *
     * @param tier         the operation's tier
     * @param mayHaveActed whether the call's effect may have happened: false when the method never ran (the gate
     *                     refused), threw one of the operation's {@code releaseOn}, or recorded a declared exception
     *                     (a decision: nothing happened)
     * @param ending       how the call ended
     */
    static Settlement settle(Tier tier, boolean mayHaveActed, Ending ending) {
        boolean hold = mayHaveActed && tier == Tier.IRREVERSIBLE;
        return switch (ending) {
            case OUTCOME -> Settlement.RECORD;
            case FAILED, ROLLED_BACK -> hold ? Settlement.HOLD_FOR_REVIEW : Settlement.RELEASE;
            case COMMIT_UNKNOWN -> hold ? Settlement.HOLD_FOR_REVIEW
                    : mayHaveActed ? Settlement.LEAVE_IN_FLIGHT : Settlement.RELEASE;
        };
    }
}
