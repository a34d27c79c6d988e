package dev.idempotency.jdbc;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.jdbc.JdbcDialect.SqlBinder;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How a database claims a key: each dialect names its way ({@link JdbcDialect#claimStrategy()}), and
 * {@link JdbcIdempotencyStore} calls it on the connection it chose (the caller's transaction, or its own). Four ways:
 *
 * <ul>
 *   <li>{@link InsertThenRead} (H2): within the lock wait the dialect bounds, insert the claim; after a conflict, read
 *       the row that holds the key.</li>
 *   <li>{@link ReadFirst} (MySQL): the same without the caller's transaction; inside it, where a write keeps a lock on
 *       every row it meets until the transaction ends (InnoDB), a plain read first, and a write only when it has to,
 *       so that a duplicate never holds a lock on a committed claim whose owner needs that row to record its
 *       outcome.</li>
 *   <li>{@link OneRoundTrip} (PostgreSQL): a claim of a new key is several statements in one round trip (the lock
 *       wait, the insert and the read after a conflict); takeovers as {@link InsertThenRead}.</li>
 *   <li>{@link OneStatement} (MariaDB): a claim of a new key is one statement, which commits on its own without the
 *       caller's transaction; inside it the plain read travels with it; takeovers as {@link ReadFirst}.</li>
 * </ul>
 *
 * <p>A way holds nothing of a store: the table's rows and statements in its dialect come with every call
 * ({@link Rows}).
 */
abstract class ClaimStrategy {

    /** How often a claim retries a conflicting row that vanished before it was read. */
    static final int CONFLICT_ATTEMPTS = 10;

    /** The way of H2: insert, then read after a conflict. */
    static final ClaimStrategy INSERT_THEN_READ = new InsertThenRead();

    /** The way of MySQL: {@link #INSERT_THEN_READ}, with a plain read first in the caller's transaction. */
    static final ClaimStrategy READ_FIRST = new ReadFirst();

    private ClaimStrategy() {
    }

    /** The way of PostgreSQL: a claim of a new key is {@code attempt}, several statements in one round trip. */
    static ClaimStrategy oneRoundTrip(AtOnce attempt) {
        return new OneRoundTrip(attempt);
    }

    /** The way of MariaDB: a claim of a new key is {@code attempt}, one statement, its plain read included. */
    static ClaimStrategy oneStatement(AtOnce attempt) {
        return new OneStatement(attempt);
    }

    /**
     * Whether a claim of a new key without the caller's transaction needs a local transaction of the store around
     * it (several statements); a single statement commits on its own on an auto-committing connection.
     */
    boolean claimNeedsLocalTransaction() {
        return true;
    }

    /**
     * Claims the key of {@code r}: inserts its row, or answers the row that holds the key.
     *
     * @param inCallerTransaction whether {@code con} carries the caller's transaction (else a local one of the store,
     *                            or none: see {@link #claimNeedsLocalTransaction()})
     * @throws JdbcDialect.LockTimeout when the lock wait ran out
     * @throws JdbcDialect.SerializationConflict when the transaction cannot go on
     */
    abstract ClaimResult claim(Rows rows, Connection con, ClaimRequest r, boolean inCallerTransaction)
            throws SQLException;

    /**
     * Replaces {@code observed} with the claim of {@code r} if it is still in the observed state, else claims or
     * answers as {@link #claim} does; always in a transaction (the caller's or the store's own).
     */
    abstract ClaimResult takeOver(Rows rows, Connection con, ClaimRequest r, IdempotencyRecord observed,
            boolean inCallerTransaction) throws SQLException;

    /**
     * Marks the claim bound by {@code claim} (key hash, lease) as needing review if its lease has ended by the
     * database's clock.
     *
     * @return whether a row was marked
     */
    boolean markNeedsReviewIfStale(Rows rows, Connection con, SqlBinder claim, boolean inCallerTransaction)
            throws SQLException {
        return rows.update(con, rows.sql().markNeedsReviewIfStale(), claim) == 1;
    }

    // ---- the ways ---------------------------------------------------------------------------------------------------

    /**
     * Inserts the claim, then reads the row that holds the key after a conflict; takes over with a conditional
     * update.
     */
    private static class InsertThenRead extends ClaimStrategy {

        @Override
        ClaimResult claim(Rows rows, Connection con, ClaimRequest r, boolean inCallerTransaction) throws SQLException {
            return rows.dialect().withLockTimeout(con, inCallerTransaction, r.lockTimeout(), () ->
                    insertOrRead(rows, con, r, inCallerTransaction, readsFirst(inCallerTransaction)));
        }

        /** Whether a claim reads the key with a plain read before its insert ({@link ReadFirst}). */
        boolean readsFirst(boolean inCallerTransaction) {
            return false;
        }

        @Override
        ClaimResult takeOver(Rows rows, Connection con, ClaimRequest r, IdempotencyRecord observed,
                boolean inCallerTransaction) throws SQLException {
            return rows.dialect().withLockTimeout(con, inCallerTransaction, r.lockTimeout(), () ->
                    rows.replace(con, r, observed) ? ClaimResult.acquired(inCallerTransaction)
                            : insertOrRead(rows, con, r, inCallerTransaction, false));
        }
    }

    /**
     * {@link InsertThenRead}, except in the caller's transaction on a database whose writes lock every row they meet
     * until the transaction ends: there the key is read with a plain read first, and a row it shows is answered
     * without writing ({@link #claim}), replaced only once a plain read shows it over by the database's clock
     * ({@link #takeOver}), marked only once a plain read shows it stale ({@link #markNeedsReviewIfStale}). An owner
     * running without a transaction can then always record its outcome while duplicates wait.
     */
    private static class ReadFirst extends InsertThenRead {

        @Override
        boolean readsFirst(boolean inCallerTransaction) {
            return inCallerTransaction;
        }

        @Override
        ClaimResult takeOver(Rows rows, Connection con, ClaimRequest r, IdempotencyRecord observed,
                boolean inCallerTransaction) throws SQLException {
            if (!inCallerTransaction) {
                return super.takeOver(rows, con, r, observed, false);
            }
            return rows.dialect().withLockTimeout(con, true, r.lockTimeout(), () -> {
                Optional<IdempotencyRecord> seen = rows.query(con, rows.sql().select(), r.keyHash());
                return seen.isPresent() ? replaceIfOver(rows, con, r, observed, seen.get())
                        : insertOrRead(rows, con, r, true, true);
            });
        }

        @Override
        boolean markNeedsReviewIfStale(Rows rows, Connection con, SqlBinder claim, boolean inCallerTransaction)
                throws SQLException {
            if (inCallerTransaction && !rows.exists(con, rows.sql().selectIfStale(), claim)) {
                // a live claim (or another row): no write, so no lock on a row its owner needs to complete
                return false;
            }
            return super.markNeedsReviewIfStale(rows, con, claim, inCallerTransaction);
        }

        /**
         * A takeover in the caller's transaction: {@code seen}, the key's row by a plain read, is replaced only if it
         * is still in the observed state and over by the database's clock (a plain read too). Otherwise it is
         * answered as is, without a lock on a claim that may be live.
         */
        private static ClaimResult replaceIfOver(Rows rows, Connection con, ClaimRequest r,
                IdempotencyRecord observed, IdempotencyRecord seen) throws SQLException {
            if (!rows.exists(con, rows.sql().selectIfOver(), ps -> rows.bindObserved(ps, 1, observed))) {
                return ClaimResult.existing(seen);
            }
            if (rows.replace(con, r, observed)) {
                return ClaimResult.acquired(true);
            }
            // the row changed since the plain read (this transaction's snapshot): the update met its latest version
            // and keeps a lock on it until this transaction ends; give up now rather than wait holding it
            throw committedInFlightMeanwhile(r);
        }
    }

    /**
     * A claim of a new key in one round trip of several statements, which therefore needs a transaction (the
     * caller's or the store's own); takeovers as {@link InsertThenRead}.
     */
    private static final class OneRoundTrip extends InsertThenRead {

        private final AtOnce attempt;

        OneRoundTrip(AtOnce attempt) {
            this.attempt = attempt;
        }

        @Override
        ClaimResult claim(Rows rows, Connection con, ClaimRequest r, boolean inCallerTransaction) throws SQLException {
            return atOnce(attempt, rows, con, r, inCallerTransaction, false);
        }
    }

    /**
     * A claim of a new key in one statement, which commits on its own without the caller's transaction, and in the
     * caller's transaction makes the plain read first itself, in the same round trip; takeovers as
     * {@link ReadFirst}.
     */
    private static final class OneStatement extends ReadFirst {

        private final AtOnce attempt;

        OneStatement(AtOnce attempt) {
            this.attempt = attempt;
        }

        @Override
        boolean claimNeedsLocalTransaction() {
            return false;
        }

        @Override
        ClaimResult claim(Rows rows, Connection con, ClaimRequest r, boolean inCallerTransaction) throws SQLException {
            return atOnce(attempt, rows, con, r, inCallerTransaction, inCallerTransaction);
        }
    }

    // ---- the steps the ways share -----------------------------------------------------------------------------------

    /**
     * Inserts the claim, or reads the row that holds the key; retried while a conflicting row vanishes.
     *
     * @param readFirst whether to read the key with a plain read before the insert, and answer a row it shows without
     *                  writing ({@link ReadFirst})
     */
    static ClaimResult insertOrRead(Rows rows, Connection con, ClaimRequest r, boolean inTransaction,
            boolean readFirst) throws SQLException {
        if (readFirst) {
            Optional<IdempotencyRecord> committed = rows.query(con, rows.sql().select(), r.keyHash());
            if (committed.isPresent()) {
                // committed (or this transaction's own): no lock taken, so its owner can record its outcome
                return ClaimResult.existing(committed.get());
            }
        }
        JdbcDialect dialect = rows.dialect();
        for (int attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
            if (dialect.insertClaim(con, rows.sql(), ps -> dialect.bindClaim(ps, 1, r))) {
                return ClaimResult.acquired(inTransaction);
            }
            Optional<IdempotencyRecord> holder = rows.query(con, rows.sql().selectLatest(), r.keyHash());
            if (holder.isPresent()) {
                if (readFirst && holder.get().status() == IdempotencyRecord.Status.IN_FLIGHT) {
                    // committed in flight after the plain read (or this transaction's snapshot): the insert now
                    // holds its row lock until this transaction ends, which the owner needs to record its outcome
                    throw committedInFlightMeanwhile(r);
                }
                return ClaimResult.existing(holder.get());
            }
            // the row that made the insert conflict was deleted (released, resolved or purged) before it was read
        }
        throw vanished(rows, r);
    }

    /**
     * A claim in one round trip per attempt; retried while a conflicting row vanishes before it is read.
     *
     * @param readFirst whether the attempt made a plain read before writing (in the caller's transaction on a
     *                  database whose writes lock the rows they meet), so that a claim in flight its insert met
     *                  instead is given up at once
     */
    private static ClaimResult atOnce(AtOnce attempts, Rows rows, Connection con, ClaimRequest r,
            boolean inTransaction, boolean readFirst) throws SQLException {
        for (int attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
            ClaimAttempt a = attempts.claim(con, inTransaction, rows.sql(), r, rows);
            if (a.inserted()) {
                return ClaimResult.acquired(inTransaction);
            }
            IdempotencyRecord holder = a.holderRead() ? a.holder()
                    : rows.query(con, rows.sql().selectLatest(), r.keyHash()).orElse(null);
            if (holder != null) {
                if (readFirst && !a.plainRead() && holder.status() == IdempotencyRecord.Status.IN_FLIGHT) {
                    // committed in flight after the plain read (or this transaction's snapshot): the insert now
                    // holds its row lock until this transaction ends, which the owner needs to record its outcome
                    throw committedInFlightMeanwhile(r);
                }
                // a plain read's row (no lock taken, so its owner can record its outcome), or one the insert met
                return ClaimResult.existing(holder);
            }
        }
        throw vanished(rows, r);
    }

    private static IllegalStateException vanished(Rows rows, ClaimRequest r) {
        return new IllegalStateException("JdbcIdempotencyStore.claim: the row of " + r + " conflicted and vanished "
                + CONFLICT_ATTEMPTS + " times in a row; is the table '" + rows.sql().table()
                + "' under a purge storm?");
    }

    private static IdempotencyInProgressException committedInFlightMeanwhile(ClaimRequest r) {
        return new IdempotencyInProgressException(r.operation(), r.key(), "another attempt with idempotency key '"
                + r.key() + "' of operation " + r.operation() + " committed its claim after this transaction read "
                + "the key (or took its snapshot); rather than wait holding a row lock that attempt needs to record "
                + "its outcome, this call gives up at once: retry it, in a new transaction, to get its outcome", null);
    }

    // ---- what a dialect's one-round-trip claim gives back -----------------------------------------------------------

    /**
     * One attempt at claiming a key in one round trip, made by a dialect ({@link OneRoundTrip}, {@link OneStatement}):
     * the lock wait bounded by the request's lock timeout and, in the caller's transaction, the caller's setting put
     * back. It fails as {@link JdbcDialect#withLockTimeout} does (a {@link JdbcDialect.LockTimeout} or
     * {@link JdbcDialect.SerializationConflict} after undoing its own effects, the caller's transaction still usable
     * unless the database aborted it).
     */
    @FunctionalInterface
    interface AtOnce {
        /** @param reader maps a row of {@link JdbcDialect#COLUMNS} */
        ClaimAttempt claim(Connection con, boolean inCallerTransaction, Statements sql, ClaimRequest r,
                RowReader reader) throws SQLException;
    }

    /** Maps the current row of {@link JdbcDialect#COLUMNS}. */
    @FunctionalInterface
    interface RowReader {
        IdempotencyRecord read(ResultSet rs) throws SQLException;
    }

    /**
     * The outcome of one claim attempt: inserted, or the row that holds the key, or neither (deleted meanwhile).
     *
     * @param plainRead  whether the holder was shown by a plain read before any write, so that no lock was taken on it
     * @param holderRead whether {@code holder} says what holds the key; false when the insert met a row it did not
     *                   return, which the strategy then reads as after any conflicting insert
     *                   ({@link Statements#selectLatest()})
     */
    record ClaimAttempt(boolean inserted, @Nullable IdempotencyRecord holder, boolean plainRead, boolean holderRead) {
        static final ClaimAttempt INSERTED = new ClaimAttempt(true, null, false, true);

        /** The insert met a row and did not return it. */
        static final ClaimAttempt MET_UNREAD = new ClaimAttempt(false, null, false, false);

        /** The row that holds the key, met by the insert. */
        static ClaimAttempt met(@Nullable IdempotencyRecord holder) {
            return new ClaimAttempt(false, holder, false, true);
        }

        /** The row that holds the key, shown by a plain read before any write. */
        static ClaimAttempt plainRead(IdempotencyRecord holder) {
            return new ClaimAttempt(false, holder, true, true);
        }
    }
}
