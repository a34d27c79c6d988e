package dev.idempotency.benchmarks.load;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.benchmarks.Database;
import dev.idempotency.benchmarks.GuardTables;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;

/**
 * The load run: the order service ({@link OrderNode}, child JVMs) on PostgreSQL over HTTP at fixed request rates,
 * open loop ({@link OpenLoop}), guarded ({@code @IdempotentRequest} with the JDBC store) and unguarded (the same
 * endpoint without it), with 0% and 50% duplicate keys. For one node, then for three nodes against the same database:
 * <ol>
 *   <li>a warm-up (every variant in turn at a quarter, a half and all of the warm-up rate, discarded);</li>
 *   <li>the unloaded latencies, at a low rate;</li>
 *   <li>a ladder of rates; a variant whose p99 exceeds 10 × its unloaded p99 at two rates in a row has found its
 *       knee, the first of the two, and stops climbing (above at one rate only, then below again, was a burst of
 *       the machine's other work; above at the last rate only is reported as unconfirmed).</li>
 * </ol>
 * At every rate, unloaded included, guarded and unguarded (of one duplicate share) run in alternating slices of a
 * few seconds, A-B-B-A, and each variant's slices are merged: on a shared machine whose other work comes and goes, a
 * guarded run and its unguarded twin are measured in the same minutes, not one after the other. After every slice
 * the run waits until every node has served every request it holds (the ones the generator gave up on included), so
 * that no slice inherits another's backlog. Both tables are emptied before each rate. The tables (named
 * {@code ld_<8 hex digits>_...}) are made from the store's shipped PostgreSQL script and dropped at the end, whatever
 * happened. The figures go to standard output and to
 * {@code benchmarks/results/<run>.md}, as Markdown; see docs/benchmarks.md, "Load held". Options ({@code --name value}):
 * see {@link #DEFAULTS}.
 */
public final class LoadRun {

    /** Every option and its default. */
    static final Map<String, String> DEFAULTS = defaults();

    /** The knee: p99 above this many times its unloaded value. */
    static final double KNEE_FACTOR = 10;

    private final Map<String, String> options;
    private final String run;
    private final HikariDataSource admin;
    private final String ordersTable;
    private final String idempotencyTable;
    private final HttpClient client;
    private final OpenLoop loop;
    private final Duration timeout;
    private final List<Double> loadAverages = new ArrayList<>();
    private int step;

    private static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("rates", "200,300,450,650,900,1300,1800,2500,3500,5000");
        d.put("slice-seconds", "2");          // recorded per slice
        d.put("slice-head-seconds", "0.5");   // sent before each slice's recorded part, not recorded
        d.put("slices", "2");                 // per variant and rate: guarded, unguarded, unguarded, guarded
        d.put("unloaded-rate", "40");
        d.put("unloaded-slices", "4");
        d.put("warmup-rate", "200");
        d.put("warmup-seconds", "5");         // per variant and round, three rounds (a quarter, half, all the rate)
        d.put("workers", "256");              // requests in flight at most; the rest queue in the generator, counted
        d.put("timeout-seconds", "10");       // a request's wait for its answer, and the give-up time in the queue
        d.put("pool", "8");                   // connections per node
        d.put("node-jvm", "-Xms256m -Xmx512m");
        d.put("duplicates", "0,50");          // the one-node runs
        d.put("three-nodes-duplicates", "50"); // the three-node row ("none" to skip it)
        d.put("out", "benchmarks/results");
        return d;
    }

    private LoadRun(Map<String, String> options, String run, HikariDataSource admin) {
        this.options = options;
        this.run = run;
        this.admin = admin;
        this.ordersTable = run + "_orders";
        this.idempotencyTable = run + "_idem";
        this.timeout = Duration.ofSeconds(Long.parseLong(options.get("timeout-seconds")));
        int workers = Integer.parseInt(options.get("workers"));
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).executor(Executors.newFixedThreadPool(4, r -> {
                    Thread t = new Thread(r, "http-client");
                    t.setDaemon(true);
                    return t;
                })).build();
        this.loop = new OpenLoop(workers, timeout);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        byte[] id = new byte[4];
        new SecureRandom().nextBytes(id);
        String run = "ld_" + HexFormat.of().formatHex(id);
        Instant started = Instant.now();
        try (HikariDataSource admin = Database.POSTGRESQL.pool(2)) {
            LoadRun load = new LoadRun(options, run, admin);
            String report = load.runAll(args, started);
            Path out = Path.of(options.get("out"), run + ".md");
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, report);
            System.out.println();
            System.out.println(report);
            System.out.println("written to " + out);
        }
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> options = new LinkedHashMap<>(DEFAULTS);
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : null;
            if (name == null || !DEFAULTS.containsKey(name) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown option or missing value at '" + args[i]
                        + "'; the options and their defaults: " + DEFAULTS);
            }
            options.put(name, args[i + 1]);
        }
        return options;
    }

    private String runAll(String[] args, Instant started) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(this::dropTables, "load-drop-tables"));
        createTables();
        String machine = machine();
        sampleLoad();
        try {
            List<Variant> oneNode = variants(options.get("duplicates"));
            Phase one = phase(1, oneNode);
            Phase three = null;
            String threeDuplicates = options.get("three-nodes-duplicates");
            if (!threeDuplicates.equals("none")) {
                three = phase(3, variants(threeDuplicates));
            }
            sampleLoad();
            return Report.markdown(run, started, Instant.now(), args, options, machine, loadAverages, one, three);
        } finally {
            dropTables();
        }
    }

    private static List<Variant> variants(String duplicates) {
        List<Variant> variants = new ArrayList<>();
        for (String d : duplicates.split(",")) {
            int percent = Integer.parseInt(d.strip());
            variants.add(new Variant(true, percent));
            variants.add(new Variant(false, percent));
        }
        return variants;
    }

    /** One guard setting and one duplicate share. */
    record Variant(boolean guarded, int duplicatePercent) {
        String label() {
            return (guarded ? "guarded" : "unguarded") + " " + duplicatePercent + "%";
        }
    }

    /** What one phase (a number of nodes) measured. */
    record Phase(int nodes, List<Variant> variants, Map<Variant, OpenLoop.Result> unloaded,
            Map<Double, Map<Variant, OpenLoop.Result>> ladder, Map<Variant, Double> knees,
            Set<Variant> unconfirmed, double maxRate) {
    }

    private Phase phase(int nodeCount, List<Variant> variants) {
        System.out.printf(Locale.ROOT, "%n== %d node(s), %s, PostgreSQL, run %s%n", nodeCount,
                variants.stream().map(Variant::label).collect(Collectors.joining(", ")), run);
        List<String> jvm = Arrays.asList(options.get("node-jvm").trim().split("\\s+"));
        try (Nodes nodes = Nodes.start(nodeCount, jvm, Database.POSTGRESQL.url(), ordersTable, idempotencyTable,
                Integer.parseInt(options.get("pool")), options.get("out") + "/" + run + "-" + nodeCount + "n")) {
            List<String> urls = nodes.baseUrls();
            System.out.println("nodes: " + urls);
            // cold JVMs (interpreted code, the JIT busy) fall over at the full rate: a quarter, a half, then all of it
            Duration warmup = seconds("warmup-seconds");
            for (double share : new double[] {0.25, 0.5, 1}) {
                for (Variant v : variants) {
                    OpenLoop.Result r = measure(urls, v, share * rate("warmup-rate"), Duration.ZERO, warmup);
                    print("warm-up " + (long) (share * rate("warmup-rate")), v, r);
                    if (share == 1 && r.failures() * 2 > r.recorded()) {
                        throw new IllegalStateException("warm-up of " + v.label() + ": " + r.failures() + " of "
                                + r.recorded() + " requests failed: " + r.failureKinds());
                    }
                }
            }
            truncate();
            Map<Variant, OpenLoop.Result> unloaded = interleaved(urls, variants, rate("unloaded-rate"),
                    Integer.parseInt(options.get("unloaded-slices")), false, "unloaded");
            Map<Double, Map<Variant, OpenLoop.Result>> ladder = new LinkedHashMap<>();
            Map<Variant, Double> knees = new LinkedHashMap<>();
            Map<Variant, Double> above = new LinkedHashMap<>();
            double maxRate = 0;
            List<Double> rates = Arrays.stream(options.get("rates").split(",")).map(s -> Double.valueOf(s.strip()))
                    .toList();
            for (int k = 0; k < rates.size() && knees.size() < variants.size(); k++) {
                double rate = rates.get(k);
                maxRate = rate;
                truncate();
                List<Variant> climbing = variants.stream().filter(v -> !knees.containsKey(v)).toList();
                Map<Variant, OpenLoop.Result> atRate = interleaved(urls, climbing, rate,
                        Integer.parseInt(options.get("slices")), k % 2 == 1, "rate " + (long) rate);
                for (Map.Entry<Variant, OpenLoop.Result> r : atRate.entrySet()) {
                    Variant v = r.getKey();
                    if (r.getValue().millis(99) <= KNEE_FACTOR * unloaded.get(v).millis(99)) {
                        above.remove(v);     // a burst of the machine's other work, not the knee
                    } else if (above.containsKey(v)) {
                        knees.put(v, above.get(v));
                    } else {
                        above.put(v, rate);
                    }
                }
                ladder.put(rate, atRate);
            }
            Set<Variant> unconfirmed = new HashSet<>();
            above.forEach((v, rate) -> {
                if (knees.putIfAbsent(v, rate) == null) {
                    unconfirmed.add(v);
                }
            });
            return new Phase(nodeCount, variants, unloaded, ladder, knees, unconfirmed, maxRate);
        }
    }

    /**
     * Measures {@code variants} at {@code rate}, guarded and unguarded of one duplicate share in alternating slices
     * (guarded, unguarded, unguarded, guarded, ...; reversed when {@code reversed}), so that the machine's other work
     * falls on both alike, and merges each variant's slices. Each slice sends for {@code slice-head-seconds} unrecorded,
     * then {@code slice-seconds} recorded.
     */
    private Map<Variant, OpenLoop.Result> interleaved(List<String> urls, List<Variant> variants, double rate,
            int slices, boolean reversed, String what) {
        Map<Variant, List<OpenLoop.Result>> parts = new LinkedHashMap<>();
        List<Integer> duplicates = variants.stream().map(Variant::duplicatePercent).distinct()
                .collect(Collectors.toCollection(ArrayList::new));
        if (reversed) {
            Collections.reverse(duplicates);
        }
        for (int d : duplicates) {
            List<Variant> pair = variants.stream().filter(v -> v.duplicatePercent() == d)
                    .collect(Collectors.toCollection(ArrayList::new));
            if (reversed) {
                Collections.reverse(pair);
            }
            for (int i = 0; i < slices; i++) {
                List<Variant> order = new ArrayList<>(pair);
                if (i % 2 == 1) {
                    Collections.reverse(order);
                }
                for (Variant v : order) {
                    OpenLoop.Result r = measure(urls, v, rate, seconds("slice-head-seconds"),
                            seconds("slice-seconds"));
                    parts.computeIfAbsent(v, k -> new ArrayList<>()).add(r);
                }
            }
        }
        Map<Variant, OpenLoop.Result> merged = new LinkedHashMap<>();
        for (Variant v : variants) {
            OpenLoop.Result r = merge(parts.get(v));
            print(what, v, r);
            merged.put(v, r);
        }
        return merged;
    }

    private OpenLoop.Result measure(List<String> urls, Variant v, double rate, Duration head, Duration measured) {
        step++;
        OrderRequests requests = new OrderRequests(client, urls, v.guarded(), v.duplicatePercent(),
                run + "-" + step, timeout);
        sampleLoad();
        OpenLoop.Result result = loop.run(requests, rate, head, measured, requests::repeat);
        awaitIdle(urls);
        return result;
    }

    /**
     * Waits until every node has served every request it holds: the requests of an overloaded step that the
     * generator gave up on are still in the nodes' queues, and would slow down the next step.
     */
    private void awaitIdle(List<String> urls) {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        for (String url : urls) {
            HttpRequest probe = HttpRequest.newBuilder(URI.create(url + OrderNode.IN_FLIGHT_PATH))
                    .timeout(timeout).GET().build();
            while (true) {
                String answer;
                try {
                    answer = client.send(probe, HttpResponse.BodyHandlers.ofString()).body().strip();
                } catch (IOException e) {
                    answer = "unanswered: " + e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + url + " to be idle", e);
                }
                if (answer.equals("0")) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(url + " still serves requests 2 min after a step: " + answer);
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + url + " to be idle", e);
                }
            }
        }
    }

    private static OpenLoop.Result merge(List<OpenLoop.Result> parts) {
        Histogram all = new Histogram(OpenLoop.HIGHEST_MICROS, 3);
        Histogram repeats = new Histogram(OpenLoop.HIGHEST_MICROS, 3);
        long recorded = 0;
        long failures = 0;
        long notSent = 0;
        long late = 0;
        Map<String, Long> kinds = new TreeMap<>();
        for (OpenLoop.Result part : parts) {
            all.add(part.latencies());
            repeats.add(part.repeats());
            recorded += part.recorded();
            failures += part.failures();
            notSent += part.notSent();
            late = Math.max(late, part.maxPacerLateNanos());
            part.failureKinds().forEach((k, n) -> kinds.merge(k, n, Long::sum));
        }
        return new OpenLoop.Result(parts.get(0).rate(), recorded, all, repeats, failures, notSent, kinds, late);
    }

    private static void print(String what, Variant v, OpenLoop.Result r) {
        System.out.printf(Locale.ROOT, "%-13s %-14s n=%6d p50=%8.2f p99=%8.2f p99.9=%8.2f max=%8.2f ms"
                + " failures=%d pacer-late-max=%.1f ms%s%n", what, v.label(), r.recorded(), r.millis(50),
                r.millis(99), r.millis(99.9), r.latencies().getMaxValue() / 1000.0, r.failures(),
                r.maxPacerLateNanos() / 1e6, r.failureKinds().isEmpty() ? "" : " " + r.failureKinds());
        if (r.repeats().getTotalCount() > 0) {
            System.out.printf(Locale.ROOT, "%-13s %-14s   first p50=%.2f p99=%.2f, retries p50=%.2f p99=%.2f ms%n",
                    "", "", r.firsts().getValueAtPercentile(50) / 1000.0, r.firsts().getValueAtPercentile(99) / 1000.0,
                    r.repeats().getValueAtPercentile(50) / 1000.0, r.repeats().getValueAtPercentile(99) / 1000.0);
        }
    }

    private double rate(String option) {
        return Double.parseDouble(options.get(option));
    }

    private Duration seconds(String option) {
        return Duration.ofMillis(Math.round(Double.parseDouble(options.get(option)) * 1000));
    }

    private void createTables() {
        GuardTables.createLibraryTable(Database.POSTGRESQL, admin, idempotencyTable);
        Database.execute(admin, "CREATE TABLE " + ordersTable + " (order_id VARCHAR(64) PRIMARY KEY,"
                + " approval_no VARCHAR(128) NOT NULL, customer_id VARCHAR(64) NOT NULL, total NUMERIC(12, 2) NOT NULL,"
                + " created_at TIMESTAMPTZ(3) NOT NULL)");
    }

    private void truncate() {
        Database.execute(admin, "TRUNCATE " + ordersTable + ", " + idempotencyTable);
    }

    private synchronized void dropTables() {
        if (admin.isClosed()) {
            return;
        }
        Database.execute(admin, "DROP TABLE IF EXISTS " + ordersTable);
        GuardTables.dropLibraryTable(Database.POSTGRESQL, admin, idempotencyTable);
    }

    private void sampleLoad() {
        try {
            loadAverages.add(Double.valueOf(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]));
        } catch (IOException | RuntimeException e) {
            // not Linux: no load figures
        }
    }

    private String machine() throws IOException {
        String cpu = "unknown CPU";
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (Files.exists(cpuinfo)) {
            cpu = Files.readAllLines(cpuinfo).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse(cpu);
        }
        long memory = -1;
        Path meminfo = Path.of("/proc/meminfo");
        if (Files.exists(meminfo)) {
            memory = Files.readAllLines(meminfo).stream().filter(l -> l.startsWith("MemTotal:"))
                    .map(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst().orElse(-1L) / 1024 / 1024;
        }
        String postgres;
        try (Connection c = admin.getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            postgres = "PostgreSQL " + rs.getString(1);
        } catch (SQLException e) {
            postgres = "PostgreSQL (version unknown: " + e.getMessage() + ")";
        }
        return Runtime.getRuntime().availableProcessors() + " cores (" + cpu + "), " + memory + " GiB, Linux "
                + System.getProperty("os.version") + ", Java " + System.getProperty("java.version") + ", " + postgres
                + " on the same machine";
    }

    static String utc(Instant instant) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'").withZone(ZoneOffset.UTC).format(instant);
    }
}
