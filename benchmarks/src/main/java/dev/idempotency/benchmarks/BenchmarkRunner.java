package dev.idempotency.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.benchmarks.Plan.Step;
import dev.idempotency.benchmarks.orders.OrderBenchmark;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs a {@link Plan} in one go: makes this run's tables and their pre-fill once (outside any measurement), runs each
 * step as a JMH run, writes every result into one JMH JSON file, and drops the tables, whatever happened.
 *
 * <pre>
 * java -cp ... dev.idempotency.benchmarks.BenchmarkRunner [--plan short|full|large] [--out results.json]
 *      [--info run-info.json] [--only REGEX] [--prof jfr]
 * </pre>
 *
 * Exits 1 if a step returned fewer results than it should (a benchmark failed); the results that exist are written.
 */
public final class BenchmarkRunner {

    private BenchmarkRunner() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = options(args);
        Plan plan = Plan.of(opts.getOrDefault("plan", "short"));
        Path out = Path.of(opts.getOrDefault("out", "benchmarks/results/results.json"));
        Path info = Path.of(opts.getOrDefault("info", out.resolveSibling("run-info.json").toString()));
        String only = opts.get("only");
        String profiler = opts.get("prof");
        // each trial appends its costs per transaction here (JVM and database CPU); the report reads it with the JSON
        Path costs = out.toAbsolutePath().resolveSibling("costs.jsonl");
        Files.deleteIfExists(costs);

        List<Step> steps = new ArrayList<>();
        for (Step step : plan.steps()) {
            if (only == null || step.describe().matches(".*(" + only + ").*")) {
                steps.add(step);
            }
        }
        String run = RunTables.newRunId();
        Instant started = Instant.now();
        System.out.printf("run %s: plan %s, %d steps, %d trials, %s%n", run, plan.name(), steps.size(),
                steps.stream().mapToInt(Step::expected).sum(), plan.settings().describe());

        Map<Database, Set<Integer>> prefills = new LinkedHashMap<>();
        Map<Database, Set<Table>> tables = new LinkedHashMap<>();
        collectTables(steps, prefills, tables);
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("load_average_before", loadAverage());
        Thread dropper = new Thread(() -> drop(run, prefills));
        Runtime.getRuntime().addShutdownHook(dropper);
        List<RunResult> results = new ArrayList<>();
        // the index of the step each result came from, in the results' order: the report pairs trials of one step
        List<Integer> resultSteps = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        try {
            prepare(run, tables, facts);
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                long t0 = System.nanoTime();
                Collection<RunResult> r = run(step, step.settings(plan.settings()), run, profiler, costs);
                results.addAll(r);
                resultSteps.addAll(Collections.nCopies(r.size(), i));
                System.out.printf("step %s: %d/%d results in %d s%n", step.describe(), r.size(), step.expected(),
                        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0));
                if (r.size() < step.expected()) {
                    missing.add(step.describe() + " (" + r.size() + "/" + step.expected() + ")");
                }
            }
        } finally {
            Files.createDirectories(out.toAbsolutePath().getParent());
            try (PrintStream ps = new PrintStream(Files.newOutputStream(out), true, StandardCharsets.UTF_8)) {
                ResultFormatFactory.getInstance(ResultFormatType.JSON, ps).writeOut(results);
            }
            facts.put("run", run);
            facts.put("plan", plan.name());
            facts.put("settings", plan.settings().describe());
            facts.put("warm_up_transactions", OrderBenchmark.WARM_UP_TRANSACTIONS);
            facts.put("warm_up_round", OrderBenchmark.WARM_UP_ROUND);
            facts.put("jit_quiet", OrderBenchmark.JIT_QUIET);
            facts.put("quiet_rounds", OrderBenchmark.QUIET_ROUNDS);
            facts.put("warm_up_seconds", OrderBenchmark.WARM_UP_SECONDS);
            facts.put("steps", steps.stream().map(Step::describe).toList());
            facts.put("result_steps", resultSteps);
            facts.put("started", started.toString());
            facts.put("seconds", Duration.between(started, Instant.now()).toSeconds());
            facts.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
            facts.put("load_average_after", loadAverage());
            facts.put("missing", missing);
            Files.writeString(info, Json.write(facts), StandardCharsets.UTF_8);
            drop(run, prefills);
            Runtime.getRuntime().removeShutdownHook(dropper);
        }
        System.out.printf("wrote %s (%d results) and %s in %d s%n", out, results.size(), info,
                Duration.between(started, Instant.now()).toSeconds());
        if (!missing.isEmpty()) {
            System.err.println("steps with missing results: " + missing);
            System.exit(1);
        }
    }

    private static Collection<RunResult> run(Step step, Plan.Settings s, String run, String profiler, Path costs)
            throws RunnerException {
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include(step.benchmark())
                .threads(step.threads())
                .forks(s.forks())
                .warmupIterations(s.warmupIterations())
                .warmupTime(TimeValue.seconds(s.warmupSeconds()))
                .measurementIterations(s.measurementIterations())
                .measurementTime(TimeValue.seconds(s.measurementSeconds()))
                .shouldFailOnError(false)
                .jvmArgsAppend("-Xms1g", "-Xmx2g", "-D" + RunTables.PROPERTY + "=" + run,
                        "-D" + OrderBenchmark.COSTS_PROPERTY + "=" + costs,
                        "-Didempotency.bench.warmup=" + OrderBenchmark.WARM_UP_TRANSACTIONS,
                        "-Didempotency.bench.warmup.seconds=" + OrderBenchmark.WARM_UP_SECONDS);
        step.params().forEach(o::param);
        // bytes allocated per operation: a measure of the JVM's work that other load on the machine does not move
        o.addProfiler(GCProfiler.class);
        if (profiler != null) {
            o.addProfiler(profiler);
        }
        return new Runner(o.build()).run();
    }

    /** The (guard, pre-fill) tables each database needs: those the steps measure, not every guard at every size. */
    private static void collectTables(List<Step> steps, Map<Database, Set<Integer>> prefills,
            Map<Database, Set<Table>> tables) {
        for (Step step : steps) {
            String[] dbs = step.params().get("db");
            if (dbs == null) {
                continue;
            }
            for (String d : dbs) {
                Database db = Database.of(d);
                for (String g : step.params().get("guard")) {
                    for (String p : step.params().get("prefill")) {
                        tables.computeIfAbsent(db, k -> new TreeSet<>())
                                .add(new Table(Guard.valueOf(g.toUpperCase(Locale.ROOT)), Integer.parseInt(p)));
                        prefills.computeIfAbsent(db, k -> new LinkedHashSet<>()).add(Integer.parseInt(p));
                    }
                }
            }
        }
        // the path benchmarks' PostgreSQL tables are their own (small, made per trial); nothing to pre-fill
    }

    /** One guard table of the run; in the order they are made: by size, then guard ((b) before (p), copied from it). */
    private record Table(Guard guard, int prefill) implements Comparable<Table> {
        @Override
        public int compareTo(Table o) {
            return prefill != o.prefill ? Integer.compare(prefill, o.prefill) : guard.compareTo(o.guard);
        }
    }

    /**
     * Creates every table of the run and builds each pre-fill once, timed, before anything is measured. The two
     * databases are prepared at the same time, each on its own thread: a pre-fill is one statement, mostly one server
     * process's work, so the other core does the other database's.
     */
    private static void prepare(String run, Map<Database, Set<Table>> tablesOf, Map<String, Object> facts)
            throws InterruptedException {
        Map<String, Object> versions = new ConcurrentHashMap<>();
        Map<String, Object> prefillSeconds = new ConcurrentHashMap<>();
        ExecutorService workers = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (Database db : new Database[] {Database.POSTGRESQL, Database.MARIADB}) {
                done.add(workers.submit(() -> prepare(run, db, tablesOf.get(db), versions, prefillSeconds)));
            }
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
            }
        } finally {
            workers.shutdownNow();
        }
        facts.put("databases", new TreeMap<>(versions));
        facts.put("prefill_seconds", new TreeMap<>(prefillSeconds));
    }

    private static void prepare(String run, Database db, Set<Table> needed, Map<String, Object> versions,
            Map<String, Object> prefillSeconds) {
        String name = db.name().toLowerCase(Locale.ROOT);
        try (HikariDataSource ds = db.pool(2)) {
            versions.put(name, version(ds));
            if (needed == null) {
                return;
            }
            GuardTables tables = new GuardTables(db, ds, run);
            tables.ensureOrders();
            for (Table t : needed) {
                long t0 = System.nanoTime();
                tables.ensure(t.guard(), t.prefill());
                if (t.prefill() > 0 && t.guard() != Guard.A) {
                    double secs = (System.nanoTime() - t0) / 1e9;
                    prefillSeconds.put(name + " " + t.guard() + " " + t.prefill(), Math.round(secs * 10) / 10.0);
                    System.out.printf("pre-filled %s %s with %,d rows in %.1f s%n", db,
                            tables.table(t.guard(), t.prefill()), t.prefill(), secs);
                }
            }
        } catch (RuntimeException e) {
            if (needed != null) {
                throw e;
            }
            versions.put(name, "unreachable: " + e.getMessage());
        }
    }

    /** The 1, 5 and 15 minute load averages: other work on the machine shows here. */
    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String version(HikariDataSource ds) {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT version()")) {
            rs.next();
            return c.getMetaData().getDatabaseProductName() + " " + rs.getString(1);
        } catch (SQLException e) {
            return "unknown: " + e.getMessage();
        }
    }

    private static void drop(String run, Map<Database, Set<Integer>> prefills) {
        for (Map.Entry<Database, Set<Integer>> e : prefills.entrySet()) {
            try (HikariDataSource ds = e.getKey().pool(1)) {
                new GuardTables(e.getKey(), ds, run).dropAll(e.getValue().stream().mapToInt(Integer::intValue)
                        .toArray());
            } catch (RuntimeException ex) {
                System.err.println("could not drop the tables of run " + run + " on " + e.getKey() + ": " + ex);
            }
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("usage: BenchmarkRunner [--plan short|full|large] [--out FILE] "
                        + "[--info FILE] [--only REGEX] [--prof jfr]; bad argument '" + args[i] + "'");
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        return opts;
    }

    /** Just enough JSON for the run facts: strings, numbers, lists and maps. */
    static final class Json {
        private Json() {
        }

        static String write(Object value) {
            StringBuilder b = new StringBuilder();
            write(value, b, "");
            return b.append('\n').toString();
        }

        private static void write(Object v, StringBuilder b, String indent) {
            if (v instanceof Map<?, ?> m) {
                b.append("{");
                String sep = "\n";
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    b.append(sep).append(indent).append("  ");
                    string(String.valueOf(e.getKey()), b);
                    b.append(": ");
                    write(e.getValue(), b, indent + "  ");
                    sep = ",\n";
                }
                b.append(m.isEmpty() ? "}" : "\n" + indent + "}");
            } else if (v instanceof Collection<?> c) {
                b.append("[");
                String sep = "\n";
                for (Object o : c) {
                    b.append(sep).append(indent).append("  ");
                    write(o, b, indent + "  ");
                    sep = ",\n";
                }
                b.append(c.isEmpty() ? "]" : "\n" + indent + "]");
            } else if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                string(String.valueOf(v), b);
            }
        }

        private static void string(String s, StringBuilder b) {
            b.append('"');
            for (char ch : s.toCharArray()) {
                switch (ch) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    default -> {
                        if (ch < 0x20) {
                            b.append(String.format("\\u%04x", (int) ch));
                        } else {
                            b.append(ch);
                        }
                    }
                }
            }
            b.append('"');
        }
    }
}
