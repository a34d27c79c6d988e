package dev.idempotency.benchmarks;

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

    /**
     * Hashes are uniformly random: inserted in that order, a million rows take InnoDB 110 s (random pages of a primary
     * key larger than its buffer pool); sorted first, 20 s. Only the pre-fill is sorted: the benchmark's own claims
     * arrive in random hash order, as users' do. (PostgreSQL takes 11 s unsorted, longer with the sort.)
     */
    private static final String IN_KEY_ORDER = " ORDER BY 1";

    private OurSchema() {
    }

    /** The shipped script's statements for {@code table}, separated by {@code ;\n}. */
    static String create(Database db, String table) {
        return fromScript("dev/idempotency/jdbc/schema-" + db.name().toLowerCase(Locale.ROOT) + ".sql", table);
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
     * Completed outcomes for keys {@code prefill-N}: hashes computed by the database (their value does not matter,
     * only that they are 32 distinct bytes, as SHA-256 gives), a JSON receipt as the result, a week to live.
     */
    static String prefill(Database db, String table, String series) {
        String key = "CONCAT('" + GuardTables.PREFILL_PREFIX + "', n)";
        String json = "CONCAT('{\"orderId\":', n, ',\"orderNo\":\"" + GuardTables.PREFILL_PREFIX + "', n,"
                + " '\",\"customer\":\"prefill\",\"amountCents\":1000}')";
        String columns = " (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,"
                + " expires_at) ";
        if (db == Database.MARIADB) {
            return "INSERT INTO " + table + columns + "SELECT UNHEX(SHA2(" + key + ", 256)), 'Ours.placeOrder', "
                    + key + ", UNHEX(SHA2(CONCAT('fp-', n), 256)), 'REVERSIBLE', 'COMPLETED', CAST(" + json
                    + " AS BINARY), NULL, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 7 DAY FROM " + series
                    + IN_KEY_ORDER;
        }
        return "INSERT INTO " + table + columns + "SELECT sha256(convert_to(" + key + ", 'UTF8')), 'Ours.placeOrder', "
                + key + ", sha256(convert_to(CONCAT('fp-', n), 'UTF8')), 'REVERSIBLE', 'COMPLETED', convert_to("
                + json + ", 'UTF8'), NULL, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP + INTERVAL '7 days' FROM " + series;
    }
}
