package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The round trips to the database of one guarded call, counted on the wire ({@link CountingSocketFactory}: the first
 * read after the client wrote), pinned so that they cannot grow unnoticed. Each call is what the benchmark's
 * {@code @Transactional} method does: a {@code TransactionTemplate} over a {@code DataSourceTransactionManager}, the
 * executor's claim on the transaction's connection, one business {@code INSERT}, the result recorded, the commit
 * (and, on MariaDB, {@code set autocommit} before and after, which the transaction manager sends). A first execution
 * uses a new key; a replay repeats a committed key. Everything the driver sends counts: statements, {@code COMMIT},
 * session settings, savepoints; a call the driver answers from its own state (a cached {@code getAutoCommit}) does
 * not. The connection is a single one, never validated by a pool, so the count is exact and the same on every run.
 *
 * <p>The hand-written guard of the benchmark's floor (c) is counted the same way, for comparison. The test prints one
 * line, {@code round trips: postgresql first=<n> replay=<n>; mariadb first=<n> replay=<n>}, to its output file
 * ({@code target/surefire-reports/dev.idempotency.jdbc.RoundTripsIT-output.txt}), which {@code .ci/run} shows.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class RoundTripsIT {

    // the pins: lower them when a change saves a round trip, never raise them to let a change through
    private static final int POSTGRES_FIRST = 4;
    private static final int POSTGRES_REPLAY = 2;
    private static final int MARIADB_FIRST = 6;
    private static final int MARIADB_REPLAY = 4;

    private static final int WARM_UP = 12;
    private static final int MEASURED = 5;

    private record Counts(long first, long replay, long floorFirst, long floorReplay) {
    }

    @Test
    void aGuardedCallTakesNoMoreRoundTripsThanPinned() {
        Counts postgres = measure(System.getenv(RealDatabase.POSTGRES_URL), false);
        Counts mariadb = measure(System.getenv(RealDatabase.MARIADB_URL), true);
        System.out.println("round trips: postgresql first=" + postgres.first() + " replay=" + postgres.replay()
                + "; mariadb first=" + mariadb.first() + " replay=" + mariadb.replay());
        System.out.println("round trips of the floor (c): postgresql first=" + postgres.floorFirst() + " replay="
                + postgres.floorReplay() + "; mariadb first=" + mariadb.floorFirst() + " replay="
                + mariadb.floorReplay());

        assertThat(postgres.first()).as("PostgreSQL, first execution").isLessThanOrEqualTo(POSTGRES_FIRST);
        assertThat(postgres.replay()).as("PostgreSQL, replay").isLessThanOrEqualTo(POSTGRES_REPLAY);
        assertThat(mariadb.first()).as("MariaDB, first execution").isLessThanOrEqualTo(MARIADB_FIRST);
        assertThat(mariadb.replay()).as("MariaDB, replay").isLessThanOrEqualTo(MARIADB_REPLAY);
        // the counter itself: the floor's statements are known, so a counter that miscounts fails here
        assertThat(postgres.floorFirst()).as("PostgreSQL floor: claim, order, record, commit").isEqualTo(4);
        assertThat(postgres.floorReplay()).as("PostgreSQL floor: claim, read, commit").isEqualTo(3);
        assertThat(mariadb.floorFirst()).as("MariaDB floor: autocommit off, claim, order, record, commit, "
                + "autocommit on").isEqualTo(6);
        assertThat(mariadb.floorReplay()).as("MariaDB floor: autocommit off, claim, read, commit, autocommit on")
                .isEqualTo(5);
    }

    private static Counts measure(String url, boolean mariadb) {
        String counted = url + (url.contains("?") ? "&" : "?") + "socketFactory="
                + CountingSocketFactory.class.getName();
        SingleConnectionDataSource dataSource = new SingleConnectionDataSource(counted, true);
        String table = TestSchema.uniqueTableName();
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        try {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).tableName(table).build();
            TestSchema.create(dataSource, store.dialect(), table);
            jdbc.execute("CREATE TABLE " + table + "_biz (id VARCHAR(64) PRIMARY KEY)");
            jdbc.execute("CREATE TABLE " + table + "_guard (idem_key VARCHAR(64) PRIMARY KEY, status VARCHAR(16) "
                    + "NOT NULL, result VARCHAR(200))");
            DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
            TransactionTemplate tx = new TransactionTemplate(transactions);
            IdempotentExecutor executor = IdempotentExecutor.builder(store)
                    .transactions(new SpringTransactionBridge(transactions)).build();
            IdempotentOperation<String> op = IdempotentOperation.builder("Orders.create", Tier.REVERSIBLE,
                    ResultType.of(String.class)).build();
            String prefix = UUID.randomUUID().toString().substring(0, 8) + "-";

            Consumer<String> ours = key -> {
                String receipt = tx.execute(s -> executor.execute(op, key, new Object[] {key}, () -> {
                    jdbc.update("INSERT INTO " + table + "_biz (id) VALUES (?)", key);
                    return "receipt-" + key;
                }));
                assertThat(receipt).isEqualTo("receipt-" + key);
            };
            String claim = mariadb
                    ? "INSERT IGNORE INTO " + table + "_guard (idem_key, status) VALUES (?, 'IN_FLIGHT')"
                    : "INSERT INTO " + table + "_guard (idem_key, status) VALUES (?, 'IN_FLIGHT') "
                            + "ON CONFLICT DO NOTHING";
            Consumer<String> floor = key -> {
                String receipt = tx.execute(s -> {
                    if (jdbc.update(claim, key) == 0) {
                        return jdbc.queryForObject("SELECT result FROM " + table + "_guard WHERE idem_key = ?",
                                String.class, key);
                    }
                    jdbc.update("INSERT INTO " + table + "_biz (id) VALUES (?)", "floor-" + key);
                    jdbc.update("UPDATE " + table + "_guard SET status = 'COMPLETED', result = ? WHERE idem_key = ?",
                            "receipt-" + key, key);
                    return "receipt-" + key;
                });
                assertThat(receipt).isEqualTo("receipt-" + key);
            };
            for (int i = 0; i < WARM_UP; i++) {
                ours.accept(prefix + "w" + i);
                ours.accept(prefix + "w" + i);
                floor.accept(prefix + "w" + i);
                floor.accept(prefix + "w" + i);
            }
            long first = 0;
            long replay = 0;
            long floorFirst = 0;
            long floorReplay = 0;
            for (int i = 0; i < MEASURED; i++) {
                String key = prefix + "m" + i;
                first = Math.max(first, count(() -> ours.accept(key)));
                replay = Math.max(replay, count(() -> ours.accept(key)));
                floorFirst = Math.max(floorFirst, count(() -> floor.accept(key)));
                floorReplay = Math.max(floorReplay, count(() -> floor.accept(key)));
            }
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + "_biz", Integer.class))
                    .as("each key ran its business insert once, through the guard and through the floor")
                    .isEqualTo(2 * (WARM_UP + MEASURED));
            return new Counts(first, replay, floorFirst, floorReplay);
        } finally {
            TestSchema.drop(dataSource, table + "_guard");
            TestSchema.drop(dataSource, table + "_biz");
            TestSchema.drop(dataSource, table);
            dataSource.destroy();
        }
    }

    private static long count(Runnable call) {
        long before = CountingSocketFactory.roundTrips();
        call.run();
        return CountingSocketFactory.roundTrips() - before;
    }
}
