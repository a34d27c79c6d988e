package dev.idempotency.jdbc;

import dev.idempotency.jdbc.ClaimStrategy.ClaimAttempt;
import dev.idempotency.jdbc.ClaimStrategy.RowReader;
import dev.idempotency.store.ClaimRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * MariaDB (10.6+, InnoDB): MySQL's statements, except that a claim of a new key is one statement, so one round trip:
 * {@code SET STATEMENT innodb_lock_wait_timeout = <n> FOR INSERT ... ON DUPLICATE KEY UPDATE key_hash = key_hash
 * RETURNING ...}. {@code SET STATEMENT} bounds the lock wait of that statement alone and leaves the session's value
 * as it was (nothing to save or put back, even when the statement fails). {@code RETURNING} gives back the row the
 * statement ended on: the one it inserted, or, after a conflict, the key's latest committed row, which the
 * {@code ON DUPLICATE KEY UPDATE} read as a locking read (so no read after it is needed, even under REPEATABLE READ).
 * The two are told apart by {@code claim_token}, a random number the insert writes and the duplicate branch leaves
 * alone: a column, because a user variable assigned in the duplicate branch reads NULL in {@code RETURNING} on a
 * session's first use. Hence MariaDB's own script, {@code schema-mariadb.sql} ({@code migrate-mariadb-claim-token.sql}
 * adds the column to a table made by {@code schema-mysql.sql}).
 *
 * <p>In the caller's transaction, the plain read that MySQL makes before its claim ({@link ClaimStrategy})
 * travels with the claim, in one compound statement: see {@link #readThenClaim(Statements, long)}; or, when the table
 * has its claim procedure ({@link ClaimProcedure}), in a {@code CALL} of the same statements.
 *
 * <p>MySQL 8 has neither {@code SET STATEMENT} nor {@code RETURNING}: it keeps {@link MySqlDialect}'s statements. The
 * rest (takeovers, the plain read first in the caller's transaction, errors, timestamps) is MySQL's.
 */
final class MariaDbDialect extends MySqlDialect {

    static final MariaDbDialect INSTANCE = new MariaDbDialect();

    // the duplicate branch changes nothing; the token is the last parameter and the last column returned, after the
    // columns the store maps
    private static final String CLAIM = """
            INSERT INTO {table} (key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until,
                                 created_at, expires_at, claim_token)
            VALUES (?, ?, ?, ?, ?, 'IN_FLIGHT', NULL, ?, ?, ?, ?)
            ON DUPLICATE KEY UPDATE key_hash = key_hash
            RETURNING key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                      expires_at, claim_token
            """;

    /**
     * The claim in the caller's transaction, the plain read before it included: see {@link #readThenClaim}. The key
     * hash is bound once, first, as the block's variable {@code k}, used three times; the claim's other parameters
     * and the token follow, as in {@link #CLAIM}. {@code result} is left to its default, NULL. {@code {lock wait}} is
     * where the {@code SET STATEMENT} prefix goes. The variables' names are one letter, since the driver copies the
     * text on every call; a local variable wins over a column of the same name, so no column can shadow them.
     */
    private static final String READ_THEN_CLAIM = """
            /*client prepare*/BEGIN NOT ATOMIC
            DECLARE k BINARY(32) DEFAULT ?;
            DECLARE f INT;
            SELECT EXISTS (SELECT 1 FROM {table} WHERE key_hash = k) INTO f;
            IF f THEN
              SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at,
                     expires_at
                FROM {table} WHERE key_hash = k;
            ELSE
              {lock wait}INSERT INTO {table} (key_hash, operation, idem_key, fingerprint, tier, status, lease_until,
                                              created_at, expires_at, claim_token)
              VALUES (k, ?, ?, ?, ?, 'IN_FLIGHT', ?, ?, ?, ?)
              ON DUPLICATE KEY UPDATE key_hash = key_hash
              RETURNING claim_token;
            END IF;
            END
            """;

    private static final String LOCK_WAIT = "{lock wait}";

    private static final Statements STATEMENTS = MySqlDialect.STATEMENTS.withClaimAtOnce(READ_THEN_CLAIM, CLAIM);

    /** {@code SET STATEMENT ... FOR } with the common lock waits (in seconds) made once: the text of most claims. */
    private static final String[] PREFIXES = new String[61];

    static {
        for (int s = 1; s < PREFIXES.length; s++) {
            PREFIXES[s] = prefix(s);
        }
    }

    private MariaDbDialect() {
    }

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    Statements statements() {
        return STATEMENTS;
    }

    @Override
    public Optional<String> claimProcedureLocation() {
        return Optional.of("dev/idempotency/jdbc/schema-mariadb-claim-procedure.sql");
    }

    @Override
    void companionsToDrop(String table, List<String> drops) {
        drops.add("DROP PROCEDURE IF EXISTS " + table + PROCEDURE_SUFFIX);
    }

    /** When the table has no claim procedure: create it. */
    @Override
    @Nullable String schemaAdvice(Connection con, String table) throws SQLException {
        if (hasClaimProcedure(con, table)) {
            return null;
        }
        return "JdbcIdempotencyStore: the table " + table + " has no claim procedure " + table + PROCEDURE_SUFFIX
                + ": claims in a caller's transaction take the compound statement, which the server parses on every"
                + " call; create the procedure with the script " + claimProcedureLocation().orElseThrow()
                + " (in the idempotency-jdbc-store jar) to halve the claim's work on the server";
    }

    /** Whether the database has {@code table}'s claim procedure ({@link ClaimProcedure}). */
    private static boolean hasClaimProcedure(Connection con, String table) throws SQLException {
        int dot = table.lastIndexOf('.');
        String catalog = dot < 0 ? con.getCatalog() : table.substring(0, dot);
        String name = table.substring(dot + 1) + PROCEDURE_SUFFIX;
        try (ResultSet rs = con.getMetaData().getProcedures(catalog, null, name)) {
            while (rs.next()) {
                // the name is a pattern, in which '_' matches any character
                if (name.equalsIgnoreCase(rs.getString("PROCEDURE_NAME"))) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A claim of a new key is {@link #claimAtOnce}, one statement; takeovers are MySQL's, reading first. */
    private final ClaimStrategy claims = ClaimStrategy.oneStatement(this::claimAtOnce);

    @Override
    ClaimStrategy claimStrategy() {
        return claims;
    }

    private static String prefix(long seconds) {
        // a number of our own making, never user input; a literal because SET STATEMENT takes no parameter
        return "SET STATEMENT innodb_lock_wait_timeout = " + seconds + " FOR ";
    }

    /**
     * Per table (its claim's text) and lock wait in seconds: the claim inside the caller's transaction, one compound
     * statement, made once.
     */
    private final Map<String, String[]> readThenClaim = new ConcurrentHashMap<>();

    /**
     * The plain read and the claim in one round trip, one result set: a compound statement ({@code BEGIN NOT
     * ATOMIC}, a single statement on the wire, so no {@code allowMultiQueries} needed). It first asks whether the key
     * has a row, {@code SELECT EXISTS (SELECT 1 ...) INTO f}: a {@code SELECT} statement, so a plain read that
     * takes no lock (tested: an owner updates the row it shows while this transaction stays open), where an
     * {@code IF EXISTS (SELECT ...)} would take a shared lock (the {@code IF}'s condition is not a {@code SELECT}
     * statement). If there is a row, a plain {@code SELECT} answers it (the same snapshot under REPEATABLE READ; under
     * READ COMMITTED it may be gone by then, and no row comes back); otherwise the claim runs and its
     * {@code RETURNING} answers with the claim's token alone: a claim of a new key (the common case) needs nothing
     * else, and each column of a result costs the driver a column definition to read and decode on every call (about
     * 2 KB for the row's eleven, measured). The column count says which branch answered: the read's row has ten,
     * the claim's one. Client-prepared whatever {@code useServerPrepStmts} says (the server cannot prepare a compound
     * statement), so the server parses the whole block on every call: it declares a variable for the answer and reads
     * a found row twice rather than copying it into ten variables declared with the columns' types, which cost more
     * to parse and make than the second read of a row by its primary key (measured: docs/benchmarks.md). The driver
     * also copies and scans the whole text on every call (and boxes the position of every parameter past the 127th
     * character): the key hash, used three times, is bound once, at the block's start, as its variable.
     */
    private String readThenClaim(Statements sql, long seconds) {
        return cached(readThenClaim, sql, seconds, true);
    }

    /** Per table (its claim's text) and lock wait in seconds: the claim in the store's own transaction, made once. */
    private final Map<String, String[]> claimAlone = new ConcurrentHashMap<>();

    private String cached(Map<String, String[]> cache, Statements sql, long seconds, boolean readFirst) {
        if (seconds >= PREFIXES.length) {
            return text(sql, prefix(seconds), readFirst);
        }
        String[] texts = cache.computeIfAbsent(sql.claimAtOnceLocal(), k -> new String[PREFIXES.length]);
        String text = texts[(int) seconds];
        if (text == null) {
            text = text(sql, PREFIXES[(int) seconds], readFirst);
            texts[(int) seconds] = text; // a benign race: every thread makes the same text
        }
        return text;
    }

    /**
     * The text of a claim, compacted ({@link #compact}): the driver copies and scans the whole text on every call
     * (client-side prepared) and sends it, so each character counts.
     */
    private static String text(Statements sql, String prefix, boolean readFirst) {
        return compact(readFirst ? sql.claimAtOnce().replace(LOCK_WAIT, prefix) : prefix + sql.claimAtOnceLocal());
    }

    /**
     * Single spaces for runs of white space, none around commas, {@code =} and after {@code ;}: no literal of the
     * claim holds any of them.
     */
    private static String compact(String sql) {
        return sql.strip().replaceAll("\\s+", " ").replace(", ", ",").replace(" = ", "=").replace("; ", ";");
    }

    private ClaimAttempt claimAtOnce(Connection con, boolean inCallerTransaction, Statements sql, ClaimRequest r,
            RowReader reader) throws SQLException {
        long seconds = atLeastOneSecond(r.lockTimeout());
        try {
            if (inCallerTransaction) {
                ClaimProcedure procedure = procedure(sql);
                if (procedure.present) {
                    try {
                        return attempt(con, true, procedure.call(seconds), r, reader);
                    } catch (SQLException e) {
                        if (!procedure.missing(e)) {
                            throw e;
                        }
                        // not there (any more), or not ours to run: the compound statement below does the same
                    }
                }
                return attempt(con, true, readThenClaim(sql, seconds), r, reader);
            }
            return attempt(con, false, cached(claimAlone, sql, seconds, false), r, reader);
        } catch (SQLException e) {
            // a lock wait timeout rolled back the statement only (unless the server says otherwise); a deadlock the
            // whole transaction
            throw asConflict(e);
        }
    }

    private ClaimAttempt attempt(Connection con, boolean inCallerTransaction, String text, ClaimRequest r,
            RowReader reader) throws SQLException {
        long token = ThreadLocalRandom.current().nextLong();
        try (PreparedStatement ps = con.prepareStatement(text)) {
            // every text takes the claim's parameters in the same order, the token last
            bindClaim(ps, 1, r);
            ps.setLong(9, token);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    if (inCallerTransaction) {
                        // the plain read's row was deleted before the second read (READ COMMITTED): try again
                        return ClaimAttempt.met(null);
                    }
                    throw new SQLException("MariaDB returned no row from the claim");
                }
                if (!inCallerTransaction) {
                    long seen = rs.getLong(11);
                    return !rs.wasNull() && seen == token ? ClaimAttempt.INSERTED : ClaimAttempt.met(reader.read(rs));
                }
                if (rs.getMetaData().getColumnCount() > 1) {
                    // the plain read's row
                    return ClaimAttempt.plainRead(reader.read(rs));
                }
                long seen = rs.getLong(1);
                if (!rs.wasNull() && seen == token) {
                    return ClaimAttempt.INSERTED;
                }
            }
            // The insert met a row committed after the plain read (the token is not ours), rare: the claim returned
            // no more than the token, so the store reads that row, as after any conflicting insert, with a locking
            // read that sees its latest committed version and waits for nothing: the insert holds the row's lock.
            return ClaimAttempt.MET_UNREAD;
        }
    }

    // ---- the claim procedure --------------------------------------------------------------------------------------

    /** The name a table's claim procedure takes, after the table's: {@code schema-mariadb-claim-procedure.sql}. */
    static final String PROCEDURE_SUFFIX = "_claim_v1";

    /** MariaDB's longest identifier. */
    private static final int MAX_IDENTIFIER = 64;

    /** No such procedure; a procedure of that name with other parameters; no right to execute it. */
    private static final Set<Integer> PROCEDURE_MISSING = Set.of(1305, 1318, 1370);

    /** Per table (its claim's text): its claim procedure, while it is thought to be there. */
    private final Map<String, ClaimProcedure> procedures = new ConcurrentHashMap<>();

    private ClaimProcedure procedure(Statements sql) {
        ClaimProcedure p = procedures.get(sql.claimAtOnceLocal());
        return p != null ? p : procedures.computeIfAbsent(sql.claimAtOnceLocal(), k -> new ClaimProcedure(sql.table()));
    }

    /**
     * A table's claim procedure, {@code <table>_claim_v1}, which {@code schema-mariadb-claim-procedure.sql} creates:
     * the statements of {@link #READ_THEN_CLAIM} in the same order, with the same parameters and answers, as a
     * stored procedure. The server parses a procedure's body once per session and keeps it; a compound statement it
     * parses on every call, its {@code INSERT} even when it does not run (about half the claim's server work, a
     * quarter of its time or more: docs/stores.md). Used when it is there: the first claim calls it, and a
     * server that says there is no such procedure (or one with other parameters, or not ours to execute) turns this
     * table's claims to the compound statement until the application restarts; the failed {@code CALL} did nothing,
     * so the compound statement runs in the same transaction at once.
     */
    static final class ClaimProcedure {

        /** The {@code CALL} per lock wait in seconds, made once. */
        private final String[] calls = new String[PREFIXES.length];
        private final String name;
        private volatile boolean present;

        ClaimProcedure(String table) {
            this.name = table + PROCEDURE_SUFFIX;
            this.present = name.length() - name.lastIndexOf('.') - 1 <= MAX_IDENTIFIER;
        }

        String call(long seconds) {
            if (seconds >= calls.length) {
                return text(seconds);
            }
            String text = calls[(int) seconds];
            if (text == null) {
                text = text(seconds);
                calls[(int) seconds] = text; // a benign race: every thread makes the same text
            }
            return text;
        }

        private String text(long seconds) {
            // the lock wait is a number of our own making, never user input: a literal, so no parameter to box
            return "CALL " + name + "(?,?,?,?,?,?,?,?,?," + seconds + ")";
        }

        /** Whether {@code e} says the procedure cannot be called; if so, it is not called again. */
        boolean missing(SQLException e) {
            if (!PROCEDURE_MISSING.contains(e.getErrorCode())) {
                return false;
            }
            present = false;
            return true;
        }
    }
}
