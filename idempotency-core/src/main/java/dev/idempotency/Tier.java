package dev.idempotency;

/**
 * What kind of side effect an operation has. The tier decides what the library does with a key, a crash and a
 * retry; it is a property of the operation's contract, never of the caller.
 *
 * <table>
 *   <caption>What each tier does</caption>
 *   <tr><th>tier</th><th>store</th><th>on a stale claim (a crash between claim and result)</th></tr>
 *   <tr><td>{@link #READ_ONLY}</td><td>never touched</td><td>n/a</td></tr>
 *   <tr><td>{@link #REVERSIBLE}</td><td>claim, record, replay</td><td>taken over by exactly one caller, the method runs again</td></tr>
 *   <tr><td>{@link #IRREVERSIBLE}</td><td>claim, record, replay</td><td>{@link IdempotencyOutcomeUnknownException}, the record is marked for review</td></tr>
 * </table>
 */
public enum Tier {
    /** No side effect: the call is neither recorded nor replayed, and costs nothing. */
    READ_ONLY,
    /** A side effect that may be done again after a crash (a row in the caller's own database, a cancellable hold). */
    REVERSIBLE,
    /** A side effect that must never happen twice (money sent, a message to a person): a crash stops for a human. */
    IRREVERSIBLE
}
