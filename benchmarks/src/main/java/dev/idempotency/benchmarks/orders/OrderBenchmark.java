package dev.idempotency.benchmarks.orders;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.benchmarks.Database;
import dev.idempotency.benchmarks.Guard;
import dev.idempotency.benchmarks.GuardTables;
import dev.idempotency.benchmarks.RunTables;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.ThreadParams;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A business transaction that inserts one order row, guarded five ways (see {@link Guard}), on a real database.
 * Throughput in transactions per second; the thread count is JMH's ({@code -t}), one pooled connection per thread.
 *
 * <p>{@code duplicates} is the share of calls that repeat a key already completed (the caller's retry after a
 * timeout): with 50, every second call of a thread repeats its previous key. {@code prefill} is how many completed
 * keys the guard's table holds before the trial starts (built once per run; each trial starts from exactly that).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class OrderBenchmark {

    @Param({"postgresql", "mariadb"})
    public String db;

    @Param({"a", "b", "c", "d", "e"})
    public String guard;

    @Param({"0", "50"})
    public int duplicates;

    @Param({"0", "1000000"})
    public int prefill;

    private HikariDataSource pool;
    private ConfigurableApplicationContext context;
    private PlaceOrder service;
    private GuardTables tables;
    private boolean ownTables;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        Database database = Database.of(db);
        Guard g = Guard.valueOf(guard.toUpperCase(Locale.ROOT));
        String run = RunTables.sharedRunId();
        ownTables = run == null;
        if (ownTables) {
            run = RunTables.newRunId();
        }
        pool = database.pool(params.getThreads() + 2);
        try {
            tables = new GuardTables(database, pool, run);
            tables.ensureOrders();
            tables.ensure(g, prefill);
            tables.reset(g, prefill);
            context = OrderContexts.start(g, new OrderTables(database, tables.orders(), tables.table(g, prefill),
                    tables.siPrefix(prefill)), pool);
            service = context.getBean(PlaceOrder.class);
            check(g);
        } catch (RuntimeException | Error e) {
            // JMH skips the tear-down of a trial whose set-up failed: clean up here
            tearDown();
            throw e;
        }
    }

    /** Proves, before measuring, that the guard does its job: a repeated key gives the first receipt back. */
    private void check(Guard g) {
        String key = "check-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        Receipt first = service.placeOrder(key, "check", 1);
        Receipt again = service.placeOrder(key, "check", 1);
        boolean ok;
        switch (g) {
            case A:
                ok = first != null && again != null && first.orderId() != again.orderId();
                break;
            case E:
                ok = first != null && again == null;
                break;
            default:
                ok = Objects.equals(first, again);
        }
        if (!ok) {
            throw new IllegalStateException("guard " + g + " on " + db + " misbehaved: " + first + " then " + again);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (context != null) {
            context.close();
        }
        if (ownTables && tables != null) {
            tables.dropAll(prefill);
        }
        if (pool != null) {
            pool.close();
        }
    }

    /** One client: its own keys, and its previous key to repeat. */
    @State(Scope.Thread)
    public static class Client {
        private String prefix;
        private String customer;
        private long n;
        private int owed;
        private String last;

        @Setup(Level.Trial)
        public void setUp(ThreadParams thread) {
            start(thread.getThreadIndex());
        }

        void start(int threadIndex) {
            prefix = "k-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + "-" + threadIndex + "-";
            customer = "customer-" + threadIndex;
        }

        /** A fresh key, or, {@code duplicates} percent of the time, the previous one again (spread evenly). */
        String next(int duplicates) {
            owed += duplicates;
            if (owed >= 100 && last != null) {
                owed -= 100;
                return last;
            }
            last = prefix + (++n);
            return last;
        }
    }

    @Benchmark
    public Receipt placeOrder(Client client) {
        return service.placeOrder(client.next(duplicates), client.customer, 1999);
    }
}
