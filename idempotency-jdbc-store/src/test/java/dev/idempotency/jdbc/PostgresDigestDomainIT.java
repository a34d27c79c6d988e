package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * PostgreSQL's digest domain ({@code <table>_sha256} in {@code schema-postgresql.sql} and its hash-partitioned
 * sibling): it refuses a key hash or a fingerprint of any other length than 32 bytes, as the CHECK constraints it
 * replaces did; a table made by the earlier scripts (with those constraints) is told of at the schema check, and
 * {@code migrate-postgresql-sha256-domain.sql} moves it to the domain without rewriting it, its rows kept and
 * replayed.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresDigestDomainIT {

    private static final String PLAIN = "dev/idempotency/jdbc/schema-postgresql.sql";
    private static final String PARTITIONED = "dev/idempotency/jdbc/schema-postgresql-partitioned.sql";

    private static final int POOL = 4;

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(POOL);

    private final List<String> tables = new ArrayList<>();
    private final JdbcTemplate jdbc = new JdbcTemplate();

    @AfterEach
    void dropTables() {
        tables.forEach(t -> TestSchema.drop(database.dataSource(), t));
    }

    @Test
    void theShippedTablesRefuseADigestOfAnyOtherLength() {
        for (String script : List.of(PLAIN, PARTITIONED)) {
            String table = newTable();
            TestSchema.create(database.dataSource(), script, table);
            assertRefusesOtherLengths(table, "_sha256_len", "_sha256_len");
            assertThat(checkConstraints(table)).as(script).isZero();
            assertThat(SchemaVerifier.verify(database.dataSource(), table, JdbcDialect.postgresql())).as(script)
                    .isNull();
        }
    }

    /** The dialect's drop statements leave nothing of a shipped table behind: its partitions and its domain go too. */
    @Test
    void dropStatementsLeaveNothingOfTheTableBehind() {
        for (String script : List.of(PLAIN, PARTITIONED)) {
            String table = newTable();
            TestSchema.create(database.dataSource(), script, table);
            JdbcDialect.postgresql().dropStatements(table).forEach(jdbc::execute);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_class WHERE relname LIKE ?", Integer.class,
                    table + "%")).as(script).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_type WHERE typname = ?", Integer.class,
                    table + "_sha256")).as(script).isZero();
        }
    }

    @Test
    void aPlainTableOfTheEarlierScriptIsToldOfAndMigratesWithoutARewrite() {
        migratesWithoutARewrite(PLAIN);
    }

    @Test
    void aPartitionedTableOfTheEarlierScriptIsToldOfAndMigratesWithoutARewrite() {
        migratesWithoutARewrite(PARTITIONED);
    }

    private void migratesWithoutARewrite(String script) {
        String table = newTable();
        run(earlier(script, table));
        assertThat(checkConstraints(table)).as("the earlier script's CHECK constraints").isPositive();
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(database.dataSource()).tableName(table).build();
        store.verifySchema();
        assertThat(SchemaVerifier.verify(database.dataSource(), table, JdbcDialect.postgresql()))
                .contains("the table " + table + " keeps its SHA-256 digests as plain BYTEA")
                .contains("migrate-postgresql-sha256-domain.sql");
        ClaimRequest completed = request("K-completed");
        assertThat(store.claim(completed).isAcquired()).isTrue();
        byte[] result = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);
        Instant expires = completed.leaseUntil().plusSeconds(3600);
        assertThat(store.complete(completed.keyHash(), completed.leaseUntil(), result, expires)).isTrue();
        ClaimRequest inFlight = request("K-in-flight");
        assertThat(store.claim(inFlight).isAcquired()).isTrue();
        Map<String, Long> files = files(table);

        run(migration(script, table));

        assertThat(files(table)).as("the table, its partitions and indexes keep their files").isEqualTo(files);
        if (script.equals(PLAIN)) {
            assertThat(checkConstraints(table)).isZero();
            assertRefusesOtherLengths(table, "_sha256_len", "_sha256_len");
        } else {
            // the partition key's type cannot change: key_hash keeps its CHECK constraint, on every partition
            assertThat(checkConstraints(table)).isEqualTo(17);
            assertRefusesOtherLengths(table, "_key_hash_len", "_sha256_len");
        }
        assertThat(SchemaVerifier.verify(database.dataSource(), table, JdbcDialect.postgresql())).isNull();
        // a store made after the migration replays what was there before it, and claims anew
        JdbcIdempotencyStore after = JdbcIdempotencyStore.builder(database.dataSource()).tableName(table).build();
        after.verifySchema();
        ClaimResult replay = after.claim(request("K-completed"));
        assertThat(replay.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(replay.record().status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);
        assertThat(replay.record().result()).isEqualTo(result);
        assertThat(after.claim(request("K-in-flight")).kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(after.claim(request("K-new")).isAcquired()).isTrue();
    }

    /**
     * A store whose pooled connections prepared its statements before the migration: each fails one claim afterwards
     * (PostgreSQL will not run a prepared statement whose result's type changed), which wrote nothing, then serves.
     */
    @Test
    void aStoreRunningThroughTheMigrationFailsAtMostOneClaimPerConnectionAndLosesNothing() {
        String table = newTable();
        run(earlier(PLAIN, table));
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(database.dataSource()).tableName(table).build();
        for (int i = 0; i < 12; i++) { // past the driver's threshold for preparing on the server (5 uses)
            assertThat(store.claim(request("K-" + i)).isAcquired()).isTrue();
            assertThat(store.claim(request("K-" + i)).kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        }
        run(migration(PLAIN, table));
        int[] failed = {0};
        for (int i = 0; i < 12; i++) {
            assertThat(claimCountingFailures(store, request("N-" + i), failed).isAcquired()).isTrue();
            assertThat(claimCountingFailures(store, request("K-" + i), failed).kind())
                    .isEqualTo(ClaimResult.Kind.EXISTING);
        }
        assertThat(failed[0]).isLessThanOrEqualTo(POOL);
    }

    /** The claim; when it fails, it must be for the changed result type and have written nothing, and it is retried. */
    private static ClaimResult claimCountingFailures(JdbcIdempotencyStore store, ClaimRequest r, int[] failed) {
        Optional<IdempotencyRecord> before = store.find(r.keyHash());
        try {
            return store.claim(r);
        } catch (RuntimeException e) {
            failed[0]++;
            assertThat(e).hasMessageContaining("cached plan must not change result type");
            assertThat(store.find(r.keyHash())).as("a failed claim writes nothing").isEqualTo(before);
            return store.claim(r);
        }
    }

    /** The table as the earlier shipped script made it: the digests plain BYTEA, a CHECK constraint on each. */
    private static String earlier(String script, String table) {
        String shipped = TestSchema.script(script);
        String domain = shipped.substring(shipped.indexOf("CREATE DOMAIN"), shipped.indexOf("CREATE TABLE"));
        String earlier = shipped.replace(domain, "")
                .replace("idempotency_record_sha256 NOT NULL", "BYTEA NOT NULL")
                .replace("CONSTRAINT idempotency_record_pk PRIMARY KEY (key_hash)\n",
                        "CONSTRAINT idempotency_record_pk PRIMARY KEY (key_hash),\n"
                        + "    CONSTRAINT idempotency_record_key_hash_len CHECK (octet_length(key_hash) = 32),\n"
                        + "    CONSTRAINT idempotency_record_fingerprint_len CHECK (octet_length(fingerprint) = 32)\n");
        assertThat(earlier).doesNotContain("_sha256").contains("_fingerprint_len CHECK");
        return earlier.replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
    }

    /** A key hash or a fingerprint of another length is refused, by the constraints of these names. */
    /**
     * The shipped migration for {@code table}; for the partitioned table without the statements marked "plain table
     * only", as its header says.
     */
    private static String migration(String script, String table) {
        String migration = TestSchema.script("dev/idempotency/jdbc/migrate-postgresql-sha256-domain.sql");
        if (script.equals(PARTITIONED)) {
            String marked = "-- plain table only\n";
            assertThat(migration).contains(marked);
            migration = migration.replaceAll("(?m)^" + marked + "[^;]*;\n", "");
            assertThat(migration).contains("ALTER COLUMN fingerprint TYPE").doesNotContain("ALTER COLUMN key_hash")
                    .doesNotContain("DROP CONSTRAINT IF EXISTS idempotency_record_key_hash_len");
        }
        return migration.replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
    }

    private void assertRefusesOtherLengths(String table, String keyHashConstraint, String fingerprintConstraint) {
        byte[] digest = new byte[32];
        for (byte[][] pair : new byte[][][] {{new byte[31], digest}, {new byte[33], digest}, {digest, new byte[31]},
                {digest, new byte[0]}}) {
            assertThatThrownBy(() -> jdbc.update("INSERT INTO " + table + " (key_hash, operation, idem_key,"
                    + " fingerprint, tier, status, created_at, expires_at) VALUES (?, 'op', 'k', ?, 'REVERSIBLE',"
                    + " 'COMPLETED', now(), now())", pair[0], pair[1]))
                    .isInstanceOf(DataIntegrityViolationException.class)
                    .hasMessageContaining(table + (pair[0].length == 32 ? fingerprintConstraint : keyHashConstraint));
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + table + " WHERE idem_key = 'k'", Long.class))
                .isZero();
    }

    /** CHECK constraints on the table and its partitions. */
    private long checkConstraints(String table) {
        return jdbc.queryForObject("SELECT count(*) FROM pg_constraint WHERE contype = 'c' AND conrelid IN ("
                + "SELECT to_regclass(?)::oid UNION SELECT inhrelid FROM pg_inherits WHERE inhparent = to_regclass(?))",
                Long.class, table, table);
    }

    /** The file of each relation of the table (itself, its partitions, their indexes), by name: a rewrite changes it. */
    private Map<String, Long> files(String table) {
        Map<String, Long> files = new java.util.TreeMap<>();
        jdbc.query("SELECT c.relname, c.relfilenode FROM pg_class c WHERE c.relname LIKE ? AND c.relfilenode <> 0",
                rs -> {
                    files.put(rs.getString(1), rs.getLong(2));
                }, table + "%");
        assertThat(files).as("relations with files of their own").hasSizeGreaterThan(2);
        return files;
    }

    private String newTable() {
        jdbc.setDataSource(database.dataSource());
        String table = TestSchema.uniqueTableName();
        tables.add(table);
        return table;
    }

    private static void run(String script) {
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(database.dataSource());
    }

    private static ClaimRequest request(String key) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key,
                Keys.sha256().digest(key.getBytes(StandardCharsets.UTF_8)), Tier.REVERSIBLE, now,
                now.plusSeconds(30), now.plusSeconds(3600), Duration.ofSeconds(5));
    }
}
