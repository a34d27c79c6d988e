package dev.idempotency.jdbc;

import java.util.function.UnaryOperator;

/**
 * Every statement of one dialect, for one table. Parameters are always bound, never spliced: the only text ever
 * substituted is the table name, which the store validated as a plain SQL identifier, and the dialect's own SQL for
 * the database's clock and null-safe equality.
 *
 * <p>Every decision that depends on time (a claim's lease has ended, an outcome has expired) is confirmed against the
 * database's clock inside the conditional statement ({@link #NOW}), as well as the executor's: the clocks of the
 * application nodes may disagree, the database's is one for all of them. A node whose clock runs ahead then never
 * takes over a live claim, marks a live irreversible claim {@code NEEDS_REVIEW} or purges a live outcome.
 *
 * <p>A statement that finds its row by key_hash tests the row's status as {@code (status = x) IS TRUE}: the same test
 * as {@code status = x} (status is NOT NULL), which no index can serve. PostgreSQL's planner would otherwise serve
 * {@code status = 'IN_FLIGHT'} from the (status, expires_at) index, since its statistics show few IN_FLIGHT rows, and
 * read every IN_FLIGHT entry (dead ones too, until vacuum) to filter key_hash, where the primary key finds the row in
 * one descent (measured on 500,000 rows: a completion's lookup read 10 buffers instead of 3).
 *
 * @param insert             the claim: key_hash, operation, idem_key, fingerprint, tier, lease_until, created_at,
 *                           expires_at (then whatever the dialect adds)
 * @param select             one row by key_hash, a plain read
 * @param selectLatest       one row by key_hash after a conflicting insert: it must see the latest committed version,
 *                           so it is a locking read where the isolation level would otherwise show an older snapshot
 *                           (MySQL/MariaDB under REPEATABLE READ); elsewhere the same as {@code select}
 * @param takeOverLeased     replaces a row still in the observed status, lease and expiry, and over by the
 *                           database's clock (an in-flight lease or a completed expiry at or before its now):
 *                           operation, idem_key, fingerprint, tier, lease_until, created_at, expires_at, then
 *                           key_hash, status, lease_until, expires_at
 * @param takeOverUnleased   the same for an observed row without a lease: ... key_hash, status, expires_at
 * @param selectIfOver       a plain read of the key_hash of a row still in the observed state and over by the
 *                           database's clock, the condition of a takeover without its write: key_hash, status,
 *                           lease_until (null-safe), expires_at
 * @param complete           result, expires_at, key_hash, lease_until
 * @param release            key_hash, lease_until
 * @param markNeedsReview    key_hash, lease_until
 * @param markNeedsReviewIfStale the same, only if that lease has ended by the database's clock: key_hash,
 *                           lease_until
 * @param selectIfStale      a plain read of the key_hash of the claim that {@code markNeedsReviewIfStale} would mark,
 *                           its condition without its write: key_hash, lease_until
 * @param renew              new lease_until, then key_hash, lease_until
 * @param resolveWithResult  an operator's decision, if the row is still in the observed state: result, expires_at,
 *                           then key_hash, status, lease_until (null-safe), expires_at
 * @param resolveDelete      the same, deleting: key_hash, status, lease_until (null-safe), expires_at
 * @param purge              now, batch size (then whatever the dialect adds); a row must also have expired by the
 *                           database's clock
 * @param claimAtOnce        the whole claim of a new key in the caller's transaction as one round trip, lock wait
 *                           bound and read after a conflict included, when the dialect has one
 *                           ({@link ClaimStrategy}: PostgreSQL's, MariaDB's); else empty
 * @param claimAtOnceLocal   the same in the store's own short transaction; else empty
 * @param backlog            per operation and status, the count, earliest created_at and earliest lease_until of
 *                           the NEEDS_REVIEW records and of the IN_FLIGHT ones whose lease ended by the instant bound
 *                           (through the index on (status, expires_at))
 * @param listNeedsReview    the NEEDS_REVIEW records, oldest first (the caller caps the rows)
 * @param listStuck          the IN_FLIGHT records whose lease ended by the instant bound, earliest lease first
 * @param table              the table's name ({@code {table}} until {@link #forTable})
 */
record Statements(
        String insert,
        String select,
        String selectLatest,
        String takeOverLeased,
        String takeOverUnleased,
        String selectIfOver,
        String complete,
        String release,
        String markNeedsReview,
        String markNeedsReviewIfStale,
        String selectIfStale,
        String renew,
        String resolveWithResult,
        String resolveDelete,
        String purge,
        String claimAtOnce,
        String claimAtOnceLocal,
        String backlog,
        String listNeedsReview,
        String listStuck,
        String table) {

    /** These statements with the one-round-trip claims of a dialect ({@code {table}} in place). */
    Statements withClaimAtOnce(String inCallerTransaction, String local) {
        return new Statements(insert, select, selectLatest, takeOverLeased, takeOverUnleased, selectIfOver, complete,
                release, markNeedsReview, markNeedsReviewIfStale, selectIfStale, renew, resolveWithResult,
                resolveDelete, purge, inCallerTransaction, local, backlog, listNeedsReview, listStuck, table);
    }

    Statements forTable(String table) {
        UnaryOperator<String> t = sql -> sql.replace(JdbcDialect.TABLE, table).strip();
        return new Statements(t.apply(insert), t.apply(select), t.apply(selectLatest), t.apply(takeOverLeased),
                t.apply(takeOverUnleased), t.apply(selectIfOver), t.apply(complete), t.apply(release),
                t.apply(markNeedsReview), t.apply(markNeedsReviewIfStale), t.apply(selectIfStale), t.apply(renew),
                t.apply(resolveWithResult), t.apply(resolveDelete), t.apply(purge), t.apply(claimAtOnce),
                t.apply(claimAtOnceLocal), t.apply(backlog), t.apply(listNeedsReview), t.apply(listStuck), table);
    }

    /**
     * Where a statement reads the database's clock: the dialect's expression for the current instant when the
     * statement runs (PostgreSQL's {@code clock_timestamp()}, not {@code now()}, which is the transaction's start), of
     * the type of the timestamp columns.
     */
    static final String NOW = "{now}";

    /** Where the shared statements compare a nullable column null-safely. */
    private static final String NULL_SAFE_EQUALS = "{null-safe-equals}";

    /** Where a takeover requires the row to be over by the database's clock. */
    private static final String OVER = "{over}";

    /** The row is over: an in-flight claim whose lease has ended, or an outcome past its expiry. */
    private static final String OVER_CONDITION =
            "((status = 'IN_FLIGHT' AND lease_until <= {now}) OR (status = 'COMPLETED' AND expires_at <= {now}))";

    private static final String SELECT = """
            SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                   expires_at
              FROM {table} WHERE key_hash = ?
            """;

    /**
     * The statements most databases share, with a plain {@code select} after a conflict and the standard null-safe
     * comparison {@code IS NOT DISTINCT FROM} (H2, PostgreSQL).
     */
    static Statements standard(String insert, String purge, String now) {
        return standard(insert, SELECT, purge, "IS NOT DISTINCT FROM", now);
    }

    /**
     * The statements most databases share; a dialect gives what differs: its claim, its read after a conflict, its
     * purge, its null-safe equality operator ({@code <=>} on MySQL, which has no {@code IS NOT DISTINCT FROM}) and its
     * clock, put in place of {@link #NOW} in every statement (the dialect's own included).
     */
    static Statements standard(String insert, String selectLatest, String purge, String nullSafeEquals,
            String now) {
        UnaryOperator<String> d = sql -> sql.replace(OVER, OVER_CONDITION).replace(NULL_SAFE_EQUALS, nullSafeEquals)
                .replace(NOW, now);
        return new Statements(d.apply(insert),
                SELECT,
                d.apply(selectLatest),
                d.apply("""
                UPDATE {table}
                   SET operation = ?, idem_key = ?, fingerprint = ?, tier = ?, status = 'IN_FLIGHT', result = NULL,
                       lease_until = ?, created_at = ?, expires_at = ?
                 WHERE key_hash = ? AND (status = ?) IS TRUE AND lease_until = ? AND expires_at = ? AND {over}
                """),
                d.apply("""
                UPDATE {table}
                   SET operation = ?, idem_key = ?, fingerprint = ?, tier = ?, status = 'IN_FLIGHT', result = NULL,
                       lease_until = ?, created_at = ?, expires_at = ?
                 WHERE key_hash = ? AND (status = ?) IS TRUE AND lease_until IS NULL AND expires_at = ? AND {over}
                """),
                d.apply("""
                SELECT key_hash FROM {table}
                 WHERE key_hash = ? AND (status = ?) IS TRUE AND lease_until {null-safe-equals} ? AND expires_at = ?
                   AND {over}
                """),
                """
                UPDATE {table} SET status = 'COMPLETED', result = ?, lease_until = NULL, expires_at = ?
                 WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ?
                """,
                """
                DELETE FROM {table} WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ?
                """,
                """
                UPDATE {table} SET status = 'NEEDS_REVIEW'
                 WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ?
                """,
                d.apply("""
                UPDATE {table} SET status = 'NEEDS_REVIEW'
                 WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ? AND lease_until <= {now}
                """),
                d.apply("""
                SELECT key_hash FROM {table}
                 WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ? AND lease_until <= {now}
                """),
                """
                UPDATE {table} SET lease_until = ?
                 WHERE key_hash = ? AND (status = 'IN_FLIGHT') IS TRUE AND lease_until = ?
                """,
                d.apply("""
                UPDATE {table} SET status = 'COMPLETED', result = ?, lease_until = NULL, expires_at = ?
                 WHERE key_hash = ? AND (status = ?) IS TRUE AND lease_until {null-safe-equals} ? AND expires_at = ?
                """),
                d.apply("""
                DELETE FROM {table}
                 WHERE key_hash = ? AND (status = ?) IS TRUE AND lease_until {null-safe-equals} ? AND expires_at = ?
                """),
                d.apply(purge),
                "",
                "",
                // both halves read the (status, expires_at) index by status: what waits, never the completed rows
                """
                SELECT operation, status, COUNT(*), MIN(created_at), MIN(lease_until)
                  FROM {table}
                 WHERE status = 'NEEDS_REVIEW' OR (status = 'IN_FLIGHT' AND lease_until <= ?)
                 GROUP BY operation, status
                 ORDER BY operation, status
                """,
                SELECT.replace("WHERE key_hash = ?", "WHERE status = 'NEEDS_REVIEW' ORDER BY created_at, key_hash"),
                SELECT.replace("WHERE key_hash = ?",
                        "WHERE status = 'IN_FLIGHT' AND lease_until <= ? ORDER BY lease_until, key_hash"),
                JdbcDialect.TABLE);
    }
}
