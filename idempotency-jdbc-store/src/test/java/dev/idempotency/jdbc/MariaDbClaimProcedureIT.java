package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * MariaDB's claim procedure ({@code schema-mariadb-claim-procedure.sql}): a claim in the caller's transaction calls it
 * when it is there, and takes the compound statement, in the same transaction and with the same answer, when it is
 * not, when it was dropped while the store ran, or when a procedure of that name takes other parameters. Which one
 * ran is told by the session's count of {@code CALL}s ({@code Com_call_procedure}).
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbClaimProcedureIT {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(4);

    private final List<String> tables = new ArrayList<>();
    private final JdbcTemplate jdbc = new JdbcTemplate();
    private TransactionTemplate tx;

    @AfterEach
    void dropTables() {
        tables.forEach(t -> {
            TestSchema.drop(database.dataSource(), t + "_biz");
            TestSchema.drop(database.dataSource(), t);
        });
    }

    @Test
    void aClaimInTheCallersTransactionCallsTheProcedureForANewKeyAndForADuplicate() {
        assertNewKeyThenDuplicate(store(true), 1);
    }

    @Test
    void withoutTheProcedureTheClaimIsTheCompoundStatementWithTheSameAnswers() {
        JdbcIdempotencyStore store = store(false);
        // the first claim tries the procedure once, the server says there is none
        assertThat(callsDuring(() -> store.claim(request(unique("K-first"))))).isEqualTo(1);
        assertNewKeyThenDuplicate(store, 0);
    }

    /** A new key is acquired, and a duplicate meets its row, each claim with {@code calls} {@code CALL}s. */
    private void assertNewKeyThenDuplicate(JdbcIdempotencyStore store, long calls) {
        ClaimRequest r = request(unique("K-new"));
        assertThat(callsDuring(() -> assertThat(store.claim(r).isAcquired()).isTrue())).isEqualTo(calls);
        ClaimResult[] again = new ClaimResult[1];
        assertThat(callsDuring(() -> again[0] = store.claim(request(r.key())))).isEqualTo(calls);
        assertThat(again[0].kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(again[0].record()).isEqualTo(r.toInFlightRecord());
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
    }

    /**
     * Dropped while the store runs: the failing {@code CALL} did nothing, so the compound statement claims in the same
     * transaction, whose earlier write stays, and the table's later claims go there at once.
     */
    @Test
    void aProcedureDroppedWhileTheStoreRunsTurnsItsClaimsToTheCompoundStatementInTheSameTransaction() {
        String table = newTable(true);
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(database.dataSource()).tableName(table).build();
        assertThat(callsDuring(() -> store.claim(request(unique("K-before"))))).isEqualTo(1);
        jdbc.execute("DROP PROCEDURE " + table + MariaDbDialect.PROCEDURE_SUFFIX);
        ClaimRequest during = request(unique("K-during"));
        ClaimRequest after = request(unique("K-after"));
        inTransaction(() -> {
            jdbc.update("INSERT INTO " + table + "_biz (id) VALUES ('kept')");
            assertThat(store.claim(during).isAcquired()).isTrue();
            assertThat(callsDuring(() -> assertThat(store.claim(after).isAcquired()).isTrue())).isZero();
            return null;
        });
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + "_biz", Integer.class)).isEqualTo(1);
        assertThat(store.find(during.keyHash())).contains(during.toInFlightRecord());
        assertThat(store.find(after.keyHash())).contains(after.toInFlightRecord());
    }

    @Test
    void aProcedureOfThatNameWithOtherParametersIsLeftAlone() {
        String table = newTable(false);
        jdbc.execute("CREATE PROCEDURE " + table + MariaDbDialect.PROCEDURE_SUFFIX + "() SELECT 1");
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(database.dataSource()).tableName(table).build();
        ClaimRequest r = request(unique("K-other"));
        assertThat(callsDuring(() -> assertThat(store.claim(r).isAcquired()).isTrue())).isEqualTo(1);
        assertThat(callsDuring(() -> store.claim(request(unique("K-next"))))).isZero();
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
    }

    /** The start's schema check says when the procedure is not there, and names it and its script. */
    @Test
    void theSchemaCheckSaysWhenTheProcedureIsNotThere() {
        String with = newTable(true);
        String without = newTable(false);
        assertThat(SchemaVerifier.verify(database.dataSource(), with, JdbcDialect.mariadb())).isNull();
        assertThat(SchemaVerifier.verify(database.dataSource(), without, JdbcDialect.mariadb()))
                .contains("the table " + without + " has no claim procedure " + without + "_claim_v1")
                .contains("schema-mariadb-claim-procedure.sql");
        assertThat(SchemaVerifier.verify(database.dataSource(), without, JdbcDialect.mysql())).isNull();
    }

    /** The dialect's drop statements take the claim procedure with the table. */
    @Test
    void dropStatementsTakeTheProcedureWithTheTable() {
        String table = newTable(true);
        JdbcDialect.mariadb().dropStatements(table).forEach(jdbc::execute);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                + " AND table_name = ?", Integer.class, table)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM information_schema.routines WHERE routine_schema ="
                + " DATABASE() AND routine_name = ?", Integer.class, table + "_claim_v1")).isZero();
    }

    /** A new table (and its business table), with or without its claim procedure. */
    private String newTable(boolean withProcedure) {
        String table = TestSchema.uniqueTableName();
        tables.add(table);
        jdbc.setDataSource(database.dataSource());
        tx = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
        TestSchema.create(database.dataSource(), JdbcDialect.mariadb().schemaLocation(), table);
        if (withProcedure) {
            TestSchema.createClaimProcedure(database.dataSource(), table);
        }
        jdbc.execute("CREATE TABLE " + table + "_biz (id VARCHAR(64) PRIMARY KEY)");
        return table;
    }

    private JdbcIdempotencyStore store(boolean withProcedure) {
        return JdbcIdempotencyStore.builder(database.dataSource()).tableName(newTable(withProcedure)).build();
    }

    private <T> T inTransaction(java.util.function.Supplier<T> work) {
        return tx.execute(s -> work.get());
    }

    /** The {@code CALL}s the session ran during {@code work}, in a transaction of its own or the caller's. */
    private long callsDuring(Runnable work) {
        return inTransaction(() -> {
            long before = calls();
            work.run();
            return calls() - before;
        });
    }

    private long calls() {
        return jdbc.queryForObject("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
                + " WHERE VARIABLE_NAME = 'COM_CALL_PROCEDURE'", Long.class);
    }

    private static String unique(String key) {
        return key + "-" + UUID.randomUUID();
    }

    private static ClaimRequest request(String key) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key,
                Keys.sha256().digest(new byte[] {1}), Tier.REVERSIBLE, now, now.plusSeconds(30), now.plusSeconds(3600),
                Duration.ofSeconds(5));
    }
}
