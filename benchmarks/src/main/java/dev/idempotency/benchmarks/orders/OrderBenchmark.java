package dev.idempotency.benchmarks.orders;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.benchmarks.Database;
import dev.idempotency.benchmarks.Guard;
import dev.idempotency.benchmarks.GuardTables;
import dev.idempotency.benchmarks.RunTables;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;
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
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;
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

    @Param({"a", "b", "c", "d", "e", "f", "p"})
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
    private BenchmarkParams params;

    /**
     * Transactions run before JMH's own warm-up, at the least, so that the JIT has compiled the path before anything is
     * measured; rounds of {@value #WARM_UP_ROUND} more follow until the JIT is quiet (see {@link #warmUp}).
     */
    public static final int WARM_UP_TRANSACTIONS = Integer.getInteger("idempotency.bench.warmup", 15_000);
    /** Transactions per round of the warm-up after the first {@link #WARM_UP_TRANSACTIONS}. */
    public static final int WARM_UP_ROUND = 4_000;
    /** The JIT is quiet when a round spent at most this share of its wall time compiling... */
    public static final double JIT_QUIET = 0.02;
    /**
     * ...and so did the round before: one quiet round can fall between two waves of compilation (a (b) trial went
     * "quiet" after 27,000 transactions in one run and needed 79,000 in another).
     */
    public static final int QUIET_ROUNDS = 2;
    /** The longest a trial warms up, in seconds ({@code -Didempotency.bench.warmup.seconds}): then it measures anyway. */
    public static final int WARM_UP_SECONDS = Integer.getInteger("idempotency.bench.warmup.seconds", 120);
    /** Where each trial appends its costs per transaction (one JSON line), if set. */
    public static final String COSTS_PROPERTY = "idempotency.bench.costs";

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    /** Whether a measurement iteration is running: only then are the costs below counted. */
    private volatile boolean measuring;
    private final LongAdder transactions = new LongAdder();
    private final LongAdder jvmCpuNanos = new LongAdder();
    private BackendCpu backend;
    private long backendAtStart;
    private long backendCpuNanos;
    private LogWritten log;
    private long logAtStart;
    private long logBytes;
    private long warmUpTransactions;
    private double warmUpSeconds;
    private double jitShare = -1;
    private double settleSeconds;
    /** The longest a trial waits for the database's clean-up of its warm-up (MariaDB's purge), in seconds. */
    static final int SETTLE_SECONDS = 120;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        this.params = params;
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
            // at least 4 threads: a one-thread trial's warm-up would be most of the plan's time, and the JIT compiles
            // the same code whichever thread runs it
            warmUp(Math.max(4, params.getThreads()));
            tables.reset(g, prefill); // the warm-up's keys out: the trial starts from exactly the pre-fill
            settleSeconds = tables.settle(SETTLE_SECONDS);
            System.out.printf(Locale.ROOT, "settled: %.1f s for the database's clean-up of the warm-up%n",
                    settleSeconds);
            backend = BackendCpu.of(database, pool, params.getThreads() + 2);
            log = new LogWritten(database, pool);
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

    /**
     * {@value #WARM_UP_TRANSACTIONS} transactions (or {@code -Didempotency.bench.warmup}) on {@code threads} threads,
     * with the trial's share of duplicates, then rounds of {@value #WARM_UP_ROUND} until {@value #QUIET_ROUNDS} in a
     * row spend at most {@link #JIT_QUIET} of their wall time compiling (the JIT's own account, {@code CompilationMXBean}), for at most
     * {@link #WARM_UP_SECONDS} seconds; all before JMH's own (short) warm-up. A fixed count is not enough: on 2 cores
     * under 16 busy threads the compiler threads fall behind, and a trial measured while C2 still compiles the guard's
     * path charges the guard with compilation the floor finished earlier.
     */
    private void warmUp(int threads) {
        ExecutorService workers = Executors.newFixedThreadPool(threads);
        long started = System.nanoTime();
        try {
            List<Client> clients = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Client client = new Client();
                client.start(t);
                clients.add(client);
            }
            int round = WARM_UP_TRANSACTIONS;
            int quiet = 0;
            while (true) {
                long compiling = JIT.getTotalCompilationTime();
                long t0 = System.nanoTime();
                runRound(workers, clients, round);
                long wallMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                warmUpTransactions += round;
                jitShare = (JIT.getTotalCompilationTime() - compiling) / (double) wallMillis;
                quiet = jitShare <= JIT_QUIET ? quiet + 1 : 0;
                if (quiet == QUIET_ROUNDS
                        || System.nanoTime() - started > TimeUnit.SECONDS.toNanos(WARM_UP_SECONDS)) {
                    break;
                }
                round = WARM_UP_ROUND;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("warm-up interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("warm-up failed: " + e.getCause(), e.getCause());
        } finally {
            workers.shutdownNow();
            warmUpSeconds = (System.nanoTime() - started) / 1e9;
        }
        System.out.printf(Locale.ROOT, "warm-up: %d transactions in %.1f s, the last round %.1f%% compiling%n",
                warmUpTransactions, warmUpSeconds, jitShare * 100);
    }

    private void runRound(ExecutorService workers, List<Client> clients, int transactions)
            throws InterruptedException, ExecutionException {
        int threads = clients.size();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int share = transactions / threads + (t < transactions % threads ? 1 : 0);
            Client client = clients.get(t);
            done.add(workers.submit(() -> {
                for (int i = 0; i < share; i++) {
                    service.placeOrder(client.next(duplicates), client.customer, 1999);
                }
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
    }

    @Setup(Level.Iteration)
    public void iterationStarts(IterationParams iteration) {
        if (iteration.getType() == IterationType.MEASUREMENT) {
            backendAtStart = backend.nanos();
            logAtStart = log.position();
            measuring = true;
        }
    }

    @TearDown(Level.Iteration)
    public void iterationEnds() {
        if (measuring) {
            measuring = false;
            long now = backend.nanos();
            long logNow = log.position();
            logBytes = logAtStart < 0 || logNow < 0 || logBytes < 0 ? -1 : logBytes + logNow - logAtStart;
            // unknown once any iteration's reading was
            backendCpuNanos = backendAtStart < 0 || now < 0 || backendCpuNanos < 0 ? -1
                    : backendCpuNanos + now - backendAtStart;
        }
    }

    /** Appends this trial's costs per transaction to the file of {@value #COSTS_PROPERTY}, for the report. */
    private void writeCosts() {
        String file = System.getProperty(COSTS_PROPERTY);
        long n = transactions.sum();
        if (file == null || n == 0 || params == null) {
            return;
        }
        String line = String.format(Locale.ROOT, "{\"db\": \"%s\", \"guard\": \"%s\", \"threads\": %d, "
                + "\"duplicates\": %d, \"prefill\": %d, \"transactions\": %d, \"jvm_cpu_ns\": %d, "
                + "\"backend_cpu_ns\": %d, \"backend_processes\": %d, \"log_bytes\": %d, "
                + "\"warm_up_transactions\": %d, \"warm_up_seconds\": %.1f, \"warm_up_jit_share\": %.4f, "
                + "\"settle_seconds\": %.1f}%n", db, guard, params.getThreads(), duplicates, prefill, n,
                jvmCpuNanos.sum(), backendCpuNanos, backend.count(), logBytes, warmUpTransactions, warmUpSeconds,
                jitShare, settleSeconds);
        try {
            Files.writeString(Path.of(file), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("could not write the trial's costs to " + file + ": " + e);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        writeCosts();
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

    /**
     * One transaction. During measurement iterations, its JVM CPU time is read before and after on the calling thread
     * ({@code ThreadMXBean}: the guard's Java work, Spring's and the driver's; not JMH's loop, not the GC's or the
     * JIT's threads).
     */
    @Benchmark
    public Receipt placeOrder(Client client) {
        String key = client.next(duplicates);
        if (!measuring) {
            return service.placeOrder(key, client.customer, 1999);
        }
        long t0 = THREADS.getCurrentThreadCpuTime();
        Receipt r = service.placeOrder(key, client.customer, 1999);
        jvmCpuNanos.add(THREADS.getCurrentThreadCpuTime() - t0);
        transactions.increment();
        return r;
    }
}
