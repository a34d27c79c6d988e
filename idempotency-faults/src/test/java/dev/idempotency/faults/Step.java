package dev.idempotency.faults;

/** Where a fault strikes one call. */
enum Step {
    /** The connection dies as the claim (the insert into the idempotency table) is about to run. */
    CLAIM,
    /** The connection of the method's transaction dies while the method runs, before its write. */
    METHOD,
    /** The connection dies as the outcome is about to be recorded (the update to COMPLETED). */
    RECORD,
    /** The connection dies as the transaction is about to commit: the commit never reaches the database. */
    COMMIT,
    /** The commit reaches the database, then its reply is lost: {@code Connection.commit()} throws afterwards. */
    LOST_COMMIT_REPLY
}
