package dev.idempotency.jdbc;

import java.util.function.UnaryOperator;

/**
 * Every statement of one dialect, for one table. Parameters are always bound, never spliced: the only text ever
 * substituted is the table name, which the store validated as a plain SQL identifier.
 *
 * @param insert             the claim: key_hash, operation, idem_key, fingerprint, tier, lease_until, created_at,
 *                           expires_at (then whatever the dialect adds)
 * @param select             one row by key_hash
 * @param selectLatest       one row by key_hash, reading the latest committed version (a locking read where needed)
 * @param takeOverLeased     replaces a row still in the observed status, lease and expiry: operation, idem_key,
 *                           fingerprint, tier, lease_until, created_at, expires_at, then key_hash, status,
 *                           lease_until, expires_at
 * @param takeOverUnleased   the same for an observed row without a lease: ... key_hash, status, expires_at
 * @param complete           result, expires_at, key_hash, lease_until
 * @param release            key_hash, lease_until
 * @param markNeedsReview    key_hash, lease_until
 * @param resolveWithResult  result, expires_at, key_hash
 * @param delete             key_hash
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
        String resolveWithResult,
        String delete,
        String purge) {

    Statements forTable(String table) {
        UnaryOperator<String> t = sql -> sql.replace(JdbcDialect.TABLE, table).strip();
        return new Statements(t.apply(insert), t.apply(select), t.apply(selectLatest), t.apply(takeOverLeased),
                t.apply(takeOverUnleased), t.apply(complete), t.apply(release), t.apply(markNeedsReview),
                t.apply(resolveWithResult), t.apply(delete), t.apply(purge));
    }

    /** The statements most databases share; a dialect replaces what differs. */
    static Statements standard(String insert, String selectLatest, String purge) {
        return new Statements(insert,
                """
                SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                       expires_at
                  FROM {table} WHERE key_hash = ?
                """,
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
                UPDATE {table} SET status = 'COMPLETED', result = ?, lease_until = NULL, expires_at = ?
                 WHERE key_hash = ?
                """,
                """
                DELETE FROM {table} WHERE key_hash = ?
                """,
                purge);
    }
}
