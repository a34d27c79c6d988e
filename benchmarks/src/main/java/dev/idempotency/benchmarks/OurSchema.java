package dev.idempotency.benchmarks;

import dev.idempotency.jdbc.JdbcDialect;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * This library's table, made from the very schema script the JDBC store ships
 * ({@code dev/idempotency/jdbc/schema-<db>.sql}) with the run's table name in place of {@code idempotency_record}.
 */
final class OurSchema {

    static final String DEFAULT_TABLE = "idempotency_record";
    /** The readable key: what a trial's reset keeps or deletes by. */
    static final String KEY_COLUMN = "idem_key";

    private OurSchema() {
    }

    /** The shipped script's statements for {@code table}, separated by {@code ;\n}. */
    static String create(Database db, String table) {
        return fromScript("dev/idempotency/jdbc/schema-" + db.name().toLowerCase(Locale.ROOT) + ".sql", table);
    }

    /**
     * MariaDB's claim procedure for {@code table}, from its shipped script (one statement, run as it is), as the
     * store is meant to be run there; nothing elsewhere.
     */
    static String[] createClaimProcedure(Database db, String table) {
        return db == Database.MARIADB
                ? new String[] {GuardTables.resource(JdbcDialect.mariadb().claimProcedureLocation().orElseThrow())
                        .replace(DEFAULT_TABLE, table)}
                : new String[0];
    }

    /** What drops {@code table} and what the scripts made beside it ({@link JdbcDialect#dropStatements}). */
    static String[] drop(Database db, String table) {
        return JdbcDialect.forProductName(db.name()).dropStatements(table).toArray(String[]::new);
    }

    /** The shipped hash-partitioned PostgreSQL script's statements for {@code table}. */
    static String createPartitioned(Database db, String table) {
        if (db != Database.POSTGRESQL) {
            throw new IllegalArgumentException("the hash-partitioned table is PostgreSQL's only, not " + db);
        }
        return fromScript("dev/idempotency/jdbc/schema-postgresql-partitioned.sql", table);
    }

    private static String fromScript(String location, String table) {
        String script = GuardTables.resource(location);
        List<String> lines = new ArrayList<>();
        for (String line : script.split("\n")) {
            if (!line.strip().startsWith("--")) {
                lines.add(line);
            }
        }
        return String.join("\n", lines).replace(DEFAULT_TABLE, table);
    }

    /**
     * Completed outcomes for keys {@code prefill-1 .. prefill-n}, as the benchmark's own calls leave them: the hash is
     * SHA-256 of the key (32 bytes spread uniformly over the key space, as the store's SHA-256 of operation, scope and
     * key is), the fingerprint 32 bytes too, a JSON receipt as the result, created over the {@code n} rows' last day and
     * kept for the store's default time to live (24 hours) from then: every row alive, their expiry times spread over
     * the coming day, not one value repeated (which an index would deduplicate to nothing).
     */
    static String prefill(Database db, String table, String series, int n) {
        String key = "CONCAT('" + GuardTables.PREFILL_PREFIX + "', n)";
        String json = "CONCAT('{\"orderId\":', n, ',\"orderNo\":\"" + GuardTables.PREFILL_PREFIX + "', n,"
                + " '\",\"customer\":\"prefill\",\"amountCents\":1000}')";
        String columns = " (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,"
                + " expires_at) ";
        if (db == Database.MARIADB) {
            String created = "UTC_TIMESTAMP(3) - INTERVAL ((" + n + " - n) * 86400000 DIV " + n + ") * 1000 MICROSECOND";
            return "INSERT INTO " + table + columns + "SELECT UNHEX(SHA2(" + key + ", 256)), 'Ours.placeOrder', "
                    + key + ", UNHEX(SHA2(CONCAT('fp-', n), 256)), 'REVERSIBLE', 'COMPLETED', CAST(" + json
                    + " AS BINARY), NULL, " + created + ", " + created + " + INTERVAL 1 DAY FROM " + series;
        }
        String created = "date_trunc('milliseconds', CURRENT_TIMESTAMP - (" + n + " - n) * (INTERVAL '1 day' / " + n
                + "))";
        return "INSERT INTO " + table + columns + "SELECT sha256(convert_to(" + key + ", 'UTF8')), 'Ours.placeOrder', "
                + key + ", sha256(convert_to(CONCAT('fp-', n), 'UTF8')), 'REVERSIBLE', 'COMPLETED', convert_to("
                + json + ", 'UTF8'), NULL, " + created + ", " + created + " + INTERVAL '1 day' FROM " + series;
    }

    /** A predicate true of the pre-filled row of key {@code prefill-n} only, by the primary key. */
    static String prefilledKey(Database db, int n) {
        String key = "'" + GuardTables.PREFILL_PREFIX + n + "'";
        return db == Database.MARIADB ? "key_hash = UNHEX(SHA2(" + key + ", 256))"
                : "key_hash = sha256(convert_to(" + key + ", 'UTF8'))";
    }
}
