package dev.idempotency.benchmarks.paths;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Tier;
import dev.idempotency.benchmarks.Database;
import dev.idempotency.benchmarks.GuardTables;
import dev.idempotency.benchmarks.RunTables;
import dev.idempotency.internal.Keys;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * One claim of the JDBC store on MariaDB in the caller's transaction, through the table's claim procedure
 * ({@code schema-mariadb-claim-procedure.sql}) or, on a table without it, the compound statement: a new key
 * ({@code newKey}) and a key whose row is there ({@code existingKey}, the plain read's answer). One connection, one
 * thread; the transaction commits every {@value #BATCH} claims, so that the claim, not the commit's flush, is what
 * is timed. {@code -p claim=procedure,compound}; the table and its procedure are made and dropped by the trial.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
public class MariaDbClaimBenchmark {

    static final int BATCH = 50;
    private static final int EXISTING = 1_000;

    @Param({"procedure", "compound"})
    public String claim;

    private HikariDataSource pool;
    private String table;
    private JdbcIdempotencyStore store;
    private DataSourceTransactionManager transactions;
    private TransactionStatus transaction;
    private long claims;
    private long next;

    @Setup(Level.Trial)
    public void setUp() {
        pool = Database.MARIADB.pool(1);
        table = RunTables.newRunId() + "_claims";
        GuardTables.createLibraryTable(Database.MARIADB, pool, table);
        if (claim.equals("compound")) {
            Database.execute(pool, "DROP PROCEDURE " + table + "_claim_v1");
        } else if (!claim.equals("procedure")) {
            throw new IllegalArgumentException("claim must be procedure or compound, was " + claim);
        }
        store = JdbcIdempotencyStore.builder(pool).tableName(table).build();
        transactions = new DataSourceTransactionManager(pool);
        begin();
        for (int i = 0; i < EXISTING; i++) {
            if (!store.claim(request("existing-" + i)).isAcquired()) {
                throw new IllegalStateException("a new key was not acquired on " + table);
            }
        }
        transactions.commit(transaction);
    }

    @Setup(Level.Iteration)
    public void begin() {
        transaction = transactions.getTransaction(new DefaultTransactionDefinition());
    }

    @TearDown(Level.Iteration)
    public void commit() {
        transactions.commit(transaction);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (pool != null) {
            GuardTables.dropLibraryTable(Database.MARIADB, pool, table);
            pool.close();
        }
    }

    @Benchmark
    public ClaimResult newKey() {
        return committingEvery(store.claim(request("new-" + next++)));
    }

    @Benchmark
    public ClaimResult existingKey() {
        ClaimResult r = store.claim(request("existing-" + next++ % EXISTING));
        if (r.kind() != ClaimResult.Kind.EXISTING) {
            throw new IllegalStateException("an existing key was " + r.kind());
        }
        return committingEvery(r);
    }

    private ClaimResult committingEvery(ClaimResult r) {
        if (++claims % BATCH == 0) {
            commit();
            begin();
        }
        return r;
    }

    private static ClaimRequest request(String key) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new ClaimRequest(Keys.hash("Claims.bench", "", key), "Claims.bench", key,
                Keys.sha256().digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8)), Tier.REVERSIBLE, now,
                now.plusSeconds(3600), now.plusSeconds(86_400), Duration.ofSeconds(5));
    }
}
