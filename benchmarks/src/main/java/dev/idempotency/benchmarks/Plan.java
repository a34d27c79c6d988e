package dev.idempotency.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link BenchmarkRunner} runs. Each step is one JMH run: a benchmark, a thread count, and the parameter values
 * it crosses. The {@code short} plan is the documented configuration of {@code benchmarks/run.sh}: every row of the
 * targets table, the 10,000,000-row tables included, every compared pair A-B-B-A, in about 45 minutes on a 2-core
 * machine, by running the heavy peers (d, e), MariaDB and the large tables on a subset of the matrix; {@code full}
 * crosses everything but the large tables (over an hour); {@code large} is the large tables alone, with the floor (c)
 * beside them.
 */
public final class Plan {

    /** One JMH run. */
    public record Step(String benchmark, int threads, Map<String, String[]> params, Settings settings) {

        Step(String benchmark, int threads, Map<String, String[]> params) {
            this(benchmark, threads, params, null);
        }

        /** This step's settings: its own, or the plan's. */
        public Settings settings(Settings plan) {
            return settings != null ? settings : plan;
        }

        /** How many results JMH should return: methods (a {@code (x|y)} group) times the parameter combinations. */
        public int expected() {
            int open = benchmark.indexOf('(');
            int n = open < 0 ? 1 : benchmark.substring(open, benchmark.indexOf(')', open)).split("\\|").length;
            for (String[] values : params.values()) {
                n *= values.length;
            }
            return n;
        }

        public String describe() {
            StringBuilder b = new StringBuilder(benchmark).append(" t=").append(threads);
            params.forEach((k, v) -> b.append(' ').append(k).append('=').append(String.join(",", v)));
            if (settings != null) {
                b.append(" (").append(settings.describe()).append(')');
            }
            return b.toString();
        }
    }

    /** JMH iteration settings shared by every step. */
    public record Settings(int forks, int warmupIterations, int warmupSeconds, int measurementIterations,
            int measurementSeconds) {

        public String describe() {
            return "forks " + forks + ", warmup " + warmupIterations + " x " + warmupSeconds + " s, measurement "
                    + measurementIterations + " x " + measurementSeconds + " s";
        }
    }

    public static final int MILLION = 1_000_000;
    /**
     * The large tables' size: 10,000,000 rows, or {@code -Didempotency.bench.large=N} (run.sh: {@code LARGE_ROWS=N}),
     * to try the plan end to end on a smaller table first.
     */
    public static final int LARGE = Integer.getInteger("idempotency.bench.large", 10 * MILLION);
    static final String ORDERS = "dev.idempotency.benchmarks.orders.OrderBenchmark.placeOrder";
    static final String PATHS = "dev.idempotency.benchmarks.paths.PathBenchmark";

    private final String name;
    private final Settings settings;
    private final List<Step> steps;

    private Plan(String name, Settings settings, List<Step> steps) {
        this.name = name;
        this.settings = settings;
        this.steps = List.copyOf(steps);
    }

    public String name() {
        return name;
    }

    public Settings settings() {
        return settings;
    }

    public List<Step> steps() {
        return steps;
    }

    /** {@code short} (the default of run.sh), {@code full} or {@code large}. */
    public static Plan of(String name) {
        switch (name) {
            case "short":
                return shortPlan();
            case "full":
                return fullPlan();
            case "large":
                return largePlan();
            default:
                throw new IllegalArgumentException("unknown plan '" + name + "': short, full or large");
        }
    }

    private static Plan shortPlan() {
        List<Step> steps = new ArrayList<>();
        paths(steps);
        String[] none = {"0"};
        String[] both = {"0", "50"};
        // every trial first runs OrderBenchmark.WARM_UP_TRANSACTIONS transactions: at one thread that is most of its
        // time, so the plan keeps to the configurations the targets name (1 and 16 threads, 0% and 50% duplicates,
        // both databases), the peers (d, e) and the baseline (a) at 16 threads; and the large tables' target: (b), and
        // (p) on PostgreSQL, empty and at LARGE rows in one step, each pair measured back to back.
        // Every ratio the targets name is measured A-B-B-A: the guards it compares in one step, then again in the
        // reverse order, so that the load this shared host drifts through between trials weighs on both sides alike
        // (the report takes each ratio within a step, then the geometric mean of the two)
        String[] sizes = {"0", String.valueOf(LARGE)};
        for (String db : new String[] {"postgresql", "mariadb"}) {
            abba(steps, 1, db, new String[] {"b", "c"}, both);
            abba(steps, 16, db, db.equals("postgresql") ? new String[] {"b", "c", "d", "e"} : new String[] {"b", "c"},
                    both);
            steps.add(orders(16, db, new String[] {"a"}, none, none));
            steps.add(orders(16, db, db.equals("postgresql") ? new String[] {"b", "p"} : new String[] {"b"}, none,
                    sizes));
        }
        return new Plan("short", new Settings(1, 1, 1, 2, 5), steps);
    }

    /** The guards in the order given, then in the reverse order: two steps, each crossing every duplicate share. */
    private static void abba(List<Step> steps, int threads, String db, String[] guards, String[] duplicates) {
        String[] reversed = new String[guards.length];
        for (int i = 0; i < guards.length; i++) {
            reversed[i] = guards[guards.length - 1 - i];
        }
        steps.add(orders(threads, db, guards, duplicates, new String[] {"0"}));
        steps.add(orders(threads, db, reversed, duplicates, new String[] {"0"}));
    }

    /**
     * The large tables alone: ours on the plain and on the hash-partitioned PostgreSQL table, and the floor, empty and
     * at {@link #LARGE} rows, 16 threads; ours on MariaDB likewise. The short plan has the targets' part of it.
     */
    private static Plan largePlan() {
        List<Step> steps = new ArrayList<>();
        String[] none = {"0"};
        String[] sizes = {"0", String.valueOf(LARGE)};
        steps.add(orders(16, "postgresql", new String[] {"b", "p", "c"}, none, sizes));
        steps.add(orders(16, "mariadb", new String[] {"b"}, none, sizes));
        return new Plan("large", new Settings(1, 1, 1, 2, 2), steps);
    }

    private static Plan fullPlan() {
        List<Step> steps = new ArrayList<>();
        paths(steps);
        String[] none = {"0"};
        String[] both = {"0", "50"};
        String[] prefills = {"0", String.valueOf(MILLION)};
        for (int t : new int[] {1, 4, 16}) {
            steps.add(orders(t, "postgresql", new String[] {"a"}, none, none));
            steps.add(orders(t, "postgresql", new String[] {"b", "c", "d", "e"}, both, prefills));
            steps.add(orders(t, "mariadb", new String[] {"a"}, none, none));
            steps.add(orders(t, "mariadb", new String[] {"b", "c"}, both, prefills));
        }
        steps.add(orders(1, "postgresql", new String[] {"f"}, none, none));
        steps.add(orders(16, "postgresql", new String[] {"f"}, none, none));
        return new Plan("full", new Settings(1, 2, 3, 3, 3), steps);
    }

    private static void paths(List<Step> steps) {
        // in-process costs, one thread: the aspect on a plain bean, the in-memory store, in-memory H2; the two replays
        // that the pre-filter target compares (from PostgreSQL, and from the pre-filter in front of it)
        // nanosecond paths need the JIT done: a longer warm-up than the database steps
        Settings warm = new Settings(1, 3, 2, 2, 1);
        // three forks for the calls of a few nanoseconds: READ_ONLY runs no code of the library (it is not advised),
        // so its target (within 5% of a plain call) compares two runs of the same proxy dispatch, and one fork's code
        // layout alone moved that ratio from +2% to +7% between two runs
        Settings forked = new Settings(3, 3, 2, 2, 1);
        steps.add(new Step(PATHS + ".(directCall|plainCall|readOnlyCall)$", 1, withStore("memory"), forked));
        steps.add(new Step(PATHS + ".(firstExecution|replayFromStore)$", 1, withStore("memory", "h2"), warm));
        steps.add(new Step(PATHS + ".(replayFromStore|replayFromPrefilter)$", 1, withStore("postgresql"), warm));
    }

    private static Map<String, String[]> withStore(String... stores) {
        Map<String, String[]> p = new LinkedHashMap<>();
        p.put("store", stores);
        return p;
    }

    private static Step orders(int threads, String db, String[] guards, String[] duplicates, String[] prefill) {
        Map<String, String[]> p = new LinkedHashMap<>();
        p.put("db", new String[] {db});
        p.put("guard", guards);
        p.put("duplicates", duplicates);
        p.put("prefill", prefill);
        return new Step(ORDERS + "$", threads, p);
    }
}
