package dev.idempotency.jdbc;

import java.util.function.UnaryOperator;

/**
 * Every statement of one dialect, for one table. Parameters are always bound, never spliced: the only text ever
 * substituted is the table name, which the store validated as a plain SQL identifier.
 *
 * @param insert             the claim: key_hash, operation, idem_key, fingerprint, tier, lease_until, created_at,
 *                           expires_at (then whatever the dialect adds)
 * @param select             one row by key_hash
 * @param selectLatest       one row by key_hash after a conflicting insert: it must see the latest committed version,
 *                           so it is a locking read where the isolation level would otherwise show an older snapshot
 *                           (MySQL/MariaDB under REPEATABLE READ); elsewhere the same as {@code select}
 * @param takeOverLeased     replaces a row still in the observed status, lease and expiry: operation, idem_key,
 *                           fingerprint, tier, lease_until, created_at, expires_at, then key_hash, status,
 *                           lease_until, expires_at
 * @param takeOverUnleased   the same for an observed row without a lease: ... key_hash, status, expires_at
 * @param complete           result, expires_at, key_hash, lease_until
 * @param release            key_hash, lease_until
 * @param markNeedsReview    key_hash, lease_until
 * @param renew              new lease_until, then key_hash, lease_until
 * @param resolveWithResult  an operator's decision, if the row is still in the observed state: result, expires_at,
 *                           then key_hash, status, lease_until (null-safe), expires_at
 * @param resolveDelete      the same, deleting: key_hash, status, lease_until (null-safe), expires_at
 * @param purge              now, batch size (then whatever the dialect adds)
 */
record Statements(
        String insert,
        String select,
        String selectLatest,
        String takeOverLeased,
        String takeOverUnleased,
        String complete,
        String release,
        String markNeedsReview,
        String renew,
        String resolveWithResult,
        String resolveDelete,
        String purge) {

    Statements forTable(String table) {
        UnaryOperator<String> t = sql -> sql.replace(JdbcDialect.TABLE, table).strip();
        return new Statements(t.apply(insert), t.apply(select), t.apply(selectLatest), t.apply(takeOverLeased),
                t.apply(takeOverUnleased), t.apply(complete), t.apply(release), t.apply(markNeedsReview),
                t.apply(renew), t.apply(resolveWithResult), t.apply(resolveDelete), t.apply(purge));
    }

    /** Where the shared statements compare a nullable column null-safely. */
    private static final String NULL_SAFE_EQUALS = "{null-safe-equals}";

    private static final String SELECT = """
            SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                   expires_at
              FROM {table} WHERE key_hash = ?
            """;

    /**
     * The statements most databases share, with a plain {@code select} after a conflict and the standard null-safe
     * comparison {@code IS NOT DISTINCT FROM} (H2, PostgreSQL).
     */
    static Statements standard(String insert, String purge) {
        return standard(insert, SELECT, purge, "IS NOT DISTINCT FROM");
    }

    /**
     * The statements most databases share; a dialect gives what differs: its claim, its read after a conflict, its
     * purge and its null-safe equality operator ({@code <=>} on MySQL, which has no {@code IS NOT DISTINCT FROM}).
     */
    static Statements standard(String insert, String selectLatest, String purge, String nullSafeEquals) {
        UnaryOperator<String> same = sql -> sql.replace(NULL_SAFE_EQUALS, nullSafeEquals);
        return new Statements(insert,
                SELECT,
                selectLatest,
                """
                UPDATE {table}
                   SET operation = ?, idem_key = ?, fingerprint = ?, tier = ?, status = 'IN_FLIGHT', result = NULL,
                       lease_until = ?, created_at = ?, expires_at = ?
                 WHERE key_hash = ? AND status = ? AND lease_until = ? AND expires_at = ?
                """,
                """
                UPDATE {table}
                   SET operation = ?, idem_key = ?, fingerprint = ?, tier = ?, status = 'IN_FLIGHT', result = NULL,
                       lease_until = ?, created_at = ?, expires_at = ?
                 WHERE key_hash = ? AND status = ? AND lease_until IS NULL AND expires_at = ?
                """,
                """
                UPDATE {table} SET status = 'COMPLETED', result = ?, lease_until = NULL, expires_at = ?
                 WHERE key_hash = ? AND status = 'IN_FLIGHT' AND lease_until = ?
                """,
                """
                DELETE FROM {table} WHERE key_hash = ? AND status = 'IN_FLIGHT' AND lease_until = ?
                """,
                """
                UPDATE {table} SET status = 'NEEDS_REVIEW'
                 WHERE key_hash = ? AND status = 'IN_FLIGHT' AND lease_until = ?
                """,
                """
                UPDATE {table} SET lease_until = ?
                 WHERE key_hash = ? AND status = 'IN_FLIGHT' AND lease_until = ?
                """,
                same.apply("""
                UPDATE {table} SET status = 'COMPLETED', result = ?, lease_until = NULL, expires_at = ?
                 WHERE key_hash = ? AND status = ? AND lease_until {null-safe-equals} ? AND expires_at = ?
                """),
                same.apply("""
                DELETE FROM {table}
                 WHERE key_hash = ? AND status = ? AND lease_until {null-safe-equals} ? AND expires_at = ?
                """),
                purge);
    }
}
