package dev.idempotency.faults;

import dev.idempotency.Tier;
import dev.idempotency.faults.History.Type;
import dev.idempotency.web.IdempotencyProblems;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The cluster storm (issue 36): {@link ClusterNode} order services in child JVMs on one {@link PostgresPair}, a
 * client that sends every logical request, with its key, to a random node over HTTP and retries it on another node
 * on a timeout, a refused connection, a 409 or a 5xx until a definite answer (a 2xx, or the 500 "outcome unknown" of
 * an irreversible key, which says not to retry); faults mid-storm: a node killed with SIGKILL and started again
 * (twice), the primary failed over to its standby, and, when the nodes' Redis pre-filter is on a Redis Cluster
 * ({@link RedisClusterServers}), one of its masters killed. Every answer goes into the {@link History}, and every
 * effect: a payout a node printed, an order row the new primary holds. After quiescence (the storm over, one last
 * request per key, the nodes' output read to its end) the {@link HistoryChecker} judges it.
 */
final class ClusterStorm implements AutoCloseable {

    /** What the storm did, and the checker's verdict; {@code requests} counts logical requests, finals included. */
    record Result(long seed, int nodes, int kills, int failovers, int requests, int httpRequests,
            Map<String, Integer> retried, Losses losses, HistoryChecker.Verdict verdict, Duration took) {

        /** The line {@code .ci/run} greps. */
        String line(String label) {
            return label + ": " + nodes + " nodes, " + kills + " kills, " + failovers + " failovers, " + requests
                    + " requests, duplicated effects " + verdict.duplicatedEffects() + ", wrong answers "
                    + verdict.wrongAnswers() + ", stuck keys " + verdict.stuckKeys();
        }
    }

    /**
     * What a failover lost, per key (the verdict counts answers): irreversible keys executed twice (their claim
     * acknowledged, then lost: the retry ran again); reversible keys with a success the new primary does not hold,
     * which ran again ({@code reversibleRanAgain}) or have no order at all ({@code reversibleGone}: a node's own
     * pre-filter still replayed the lost outcome, or no request ran it again).
     */
    record Losses(int irreversibleTwice, int reversibleRanAgain, int reversibleGone) {

        @Override
        public String toString() {
            return irreversibleTwice + " irreversible keys executed twice, " + reversibleRanAgain
                    + " reversible keys whose acknowledged order was lost and placed again, " + reversibleGone
                    + " whose acknowledged order was lost and not placed again";
        }
    }

    private static final int REQUESTS_PER_KEY = 3;
    /** Keys whose requests are shuffled together, so that a key's requests run at once on different threads. */
    private static final int KEYS_PER_BLOCK = 8;
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(4);
    /** How long one logical request is retried before it counts as without a definite answer. */
    private static final Duration REQUEST_BOUND = Duration.ofSeconds(60);

    /** One application JVM; its incarnations share a slot. */
    private final class Node {
        final int slot;
        volatile @Nullable Process process;
        volatile int port;
        volatile String name = "";
        final Deque<String> transcript = new ArrayDeque<>();
        final List<Thread> readers = new CopyOnWriteArrayList<>();

        Node(int slot) {
            this.slot = slot;
        }

        /** Starts an incarnation and waits until it serves. */
        void start(int incarnation) {
            name = "n" + slot + (char) ('a' + incarnation);
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx160m", "-XX:TieredStopAtLevel=1",
                    "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), ClusterNode.class.getName(),
                    pair.url(), tables.idempotency(), tables.business(), name));
            if (redis != null) {
                command.add(redis.nodes());
            }
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            // the pre-filter's signing secret, shared by every node (Boot binds it to idempotency.redis.secret)
            builder.environment().put("IDEMPOTENCY_REDIS_SECRET", redisSecret);
            Process p;
            try {
                p = builder.start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start node " + name, e);
            }
            CountDownLatch listening = new CountDownLatch(1);
            String incarnationName = name;
            Thread reader = new Thread(() -> read(p, incarnationName, listening), "node-" + name);
            reader.setDaemon(true);
            reader.start();
            readers.add(reader);
            try {
                if (!listening.await(120, TimeUnit.SECONDS) || !p.isAlive()) {
                    p.destroyForcibly();
                    throw new IllegalStateException("node " + name + " did not start; its last lines:\n"
                            + transcript());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            process = p;
        }

        private void read(Process p, String incarnation, CountDownLatch listening) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith("effect ")) {
                        String[] parts = line.split(" ");
                        history.effect(parts[1], parts[2]);
                    } else if (line.startsWith("listening ")) {
                        port = Integer.parseInt(line.substring("listening ".length()));
                        listening.countDown();
                    } else {
                        synchronized (transcript) {
                            transcript.add(incarnation + ": " + line);
                            if (transcript.size() > 60) {
                                transcript.removeFirst();
                            }
                        }
                    }
                }
            } catch (IOException e) {
                synchronized (transcript) {
                    transcript.add(incarnation + ": (read failed: " + e + ")");
                }
            }
        }

        String transcript() {
            synchronized (transcript) {
                return String.join("\n", transcript);
            }
        }

        /** SIGKILL (Process.destroyForcibly on Linux), and waits until the JVM is gone. */
        void kill() {
            Process p = process;
            process = null;
            if (p == null) {
                return;
            }
            p.destroyForcibly();
            try {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("node " + name + " survived SIGKILL");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        /** Waits until every incarnation's output is read to its end (every effect it printed is in the history). */
        void drain() throws InterruptedException {
            for (Thread t : readers) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
    }

    private record Request(String id, String key, Tier tier) {
    }

    private final PostgresPair pair;
    private final @Nullable RedisClusterServers redis;
    private final String redisSecret = UUID.randomUUID() + "-" + UUID.randomUUID();
    private final Tables tables = Tables.unique();
    private final FaultDatabase database;
    private final History history = new History();
    private final List<Node> nodes = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(1)).executor(threads).build();
    private final AtomicInteger kills = new AtomicInteger();
    private final AtomicInteger failovers = new AtomicInteger();
    private final AtomicInteger httpRequests = new AtomicInteger();

    /** The nodes on {@code pair}, and behind the Redis pre-filter on {@code redis} when there is one. */
    ClusterStorm(PostgresPair pair, @Nullable RedisClusterServers redis, int nodeCount) {
        this.pair = pair;
        this.redis = redis;
        this.database = FaultDatabase.attach(FaultDatabase.Kind.POSTGRESQL, pair.url(), tables, 2);
        database.createTables();
        for (int i = 1; i <= nodeCount; i++) {
            nodes.add(new Node(i));
        }
    }

    /**
     * Starts the nodes, storms them for {@code length} with {@code clients} threads while the faults strike (a node
     * killed at 20% of the storm, the primary failed over at 45%, a Redis master killed at 60% when there is a Redis
     * Cluster, another node killed at 70%: {@code crash} kills the primary with an immediate stop, else it is stopped
     * cleanly), then quiesces and judges.
     */
    Result run(Duration length, int clients, boolean crash) throws Exception {
        long started = System.nanoTime();
        long seed = Long.getLong("faults.seed", new Random().nextLong());
        Random random = new Random(seed);
        List<Future<?>> starting = new ArrayList<>();
        for (Node n : nodes) {
            starting.add(threads.submit(() -> n.start(0)));
        }
        for (Future<?> f : starting) {
            f.get();
        }
        String prefix = "cs-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Map<String, Tier> tiers = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicInteger nextKey = new AtomicInteger();
        Queue<Request> queue = new ConcurrentLinkedQueue<>();
        AtomicInteger requests = new AtomicInteger();
        long end = System.nanoTime() + length.toNanos();
        // the faults, on a schedule of their own
        Future<?> nemesis = threads.submit(() -> {
            sleepUntil(started(end, length, 0.20));
            Node victim = nodes.get(random.nextInt(nodes.size()));
            victim.kill();
            kills.incrementAndGet();
            victim.start(1);
            sleepUntil(started(end, length, 0.45));
            pair.failOver(crash);
            failovers.incrementAndGet();
            if (redis != null) {
                sleepUntil(started(end, length, 0.60));
                redis.killMaster();
                failovers.incrementAndGet();
            }
            sleepUntil(started(end, length, 0.70));
            Node other = nodes.get((nodes.indexOf(victim) + 1 + random.nextInt(nodes.size() - 1)) % nodes.size());
            other.kill();
            kills.incrementAndGet();
            other.start(2);
            return null;
        });
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < clients; t++) {
            Random own = new Random(random.nextLong());
            workers.add(threads.submit(() -> {
                while (System.nanoTime() < end) {
                    Request r = queue.poll();
                    if (r == null) {
                        refill(queue, prefix, nextKey, tiers, own);
                        continue;
                    }
                    requests.incrementAndGet();
                    serve(r, own);
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(length.toSeconds() + REQUEST_BOUND.toSeconds() + 60, TimeUnit.SECONDS);
        }
        nemesis.get(180, TimeUnit.SECONDS);
        // quiescence: one more request per key that got any, until a definite answer (a claim a killed node left
        // behind is taken over, or stopped for review, by it once its lease ran out)
        Queue<Request> finals = new ConcurrentLinkedQueue<>();
        Map<String, Tier> asked = new LinkedHashMap<>();
        for (History.Event e : history.events()) {
            if (e.type() == Type.INVOKE && e.key().startsWith(prefix)) {
                asked.put(e.key(), tiers.get(e.key()));
            }
        }
        asked.forEach((key, tier) -> finals.add(new Request("final-" + key, key, tier)));
        requests.addAndGet(finals.size());
        workers.clear();
        for (int t = 0; t < clients; t++) {
            Random own = new Random(random.nextLong());
            workers.add(threads.submit(() -> {
                for (Request r; (r = finals.poll()) != null; ) {
                    serve(r, own);
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get(REQUEST_BOUND.toSeconds() * 2 + 60, TimeUnit.SECONDS);
        }
        // every effect a node printed, read to the end of its output
        for (Node n : nodes) {
            n.kill();
        }
        for (Node n : nodes) {
            n.drain();
        }
        HistoryChecker.Stored stored = HistoryChecker.Stored.read(new JdbcTemplate(database.pool()), tables,
                prefix);
        Map<String, List<String>> committed = stored.committed();
        List<History.Event> events = history.eventsOf(prefix);
        HistoryChecker.Verdict verdict = HistoryChecker.check(events, asked, committed, stored.inFlight());
        Map<String, Integer> retried = new java.util.TreeMap<>();
        for (History.Event e : events) {
            if (e.type() == Type.FAIL) {
                String v = String.valueOf(e.value());
                retried.merge(reason(v), 1, Integer::sum);
            }
        }
        return new Result(seed, nodes.size(), kills.get(), failovers.get(), requests.get(), httpRequests.get(),
                retried, losses(events, asked, committed), verdict, Duration.ofNanos(System.nanoTime() - started));
    }

    private static Losses losses(List<History.Event> events, Map<String, Tier> tiers,
            Map<String, List<String>> committed) {
        Map<String, Integer> effects = new HashMap<>();
        Set<String> lostOk = new TreeSet<>();
        for (History.Event e : events) {
            if (e.type() == Type.EFFECT) {
                effects.merge(e.key(), 1, Integer::sum);
            } else if (e.type() == Type.OK && tiers.get(e.key()) == Tier.REVERSIBLE
                    && !committed.getOrDefault(e.key(), List.of()).contains(e.value())) {
                lostOk.add(e.key());
            }
        }
        int twice = (int) effects.values().stream().filter(n -> n > 1).count();
        int ranAgain = (int) lostOk.stream().filter(committed::containsKey).count();
        return new Losses(twice, ranAgain, lostOk.size() - ranAgain);
    }

    /** A failed attempt's reason, for the tally: the status and the problem's type, or the exception's class. */
    private static String reason(String failure) {
        int problem = failure.indexOf("/problems/");
        if (Character.isDigit(failure.charAt(0))) {
            return failure.substring(0, 3) + (problem < 0 ? ""
                    : " " + failure.substring(problem + "/problems/".length()).split("[^a-z-]")[0]);
        }
        return failure.substring(0, Math.max(failure.indexOf(':'), 0));
    }

    private static long started(long end, Duration length, double share) {
        return end - length.toNanos() + (long) (length.toNanos() * share);
    }

    /** The next block of keys, their requests shuffled together. */
    private static void refill(Queue<Request> queue, String prefix, AtomicInteger nextKey, Map<String, Tier> tiers,
            Random random) {
        List<Request> block = new ArrayList<>();
        for (int k = 0; k < KEYS_PER_BLOCK; k++) {
            int i = nextKey.getAndIncrement();
            String key = prefix + i;
            Tier tier = i % 2 == 0 ? Tier.REVERSIBLE : Tier.IRREVERSIBLE;
            tiers.put(key, tier);
            for (int r = 0; r < REQUESTS_PER_KEY; r++) {
                block.add(new Request(key + "/" + r, key, tier));
            }
        }
        Collections.shuffle(block, random);
        queue.addAll(block);
    }

    /** A node that serves, other than {@code not} when there is one. */
    private @Nullable Node pick(Random random, @Nullable Node not) {
        List<Node> up = new ArrayList<>();
        for (Node n : nodes) {
            if (n.process != null && n != not) {
                up.add(n);
            }
        }
        if (up.isEmpty() && not != null && not.process != null) {
            up.add(not);
        }
        return up.isEmpty() ? null : up.get(random.nextInt(up.size()));
    }

    /** Sends one logical request, to another node after each failure, until a definite answer or its bound. */
    private void serve(Request r, Random random) {
        long deadline = System.nanoTime() + REQUEST_BOUND.toNanos();
        Node last = null;
        while (System.nanoTime() < deadline) {
            Node node = pick(random, last);
            if (node == null) {
                pause(random, 100);
                continue;
            }
            int port = node.port;
            history.add(r.key(), Type.INVOKE, node.name, r.id());
            httpRequests.incrementAndGet();
            try {
                HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + (r.tier() == Tier.REVERSIBLE ? "/orders" : "/payouts")))
                        .timeout(HTTP_TIMEOUT).header("Idempotency-Key", r.key())
                        .POST(HttpRequest.BodyPublishers.noBody()).build();
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                if (status / 100 == 2) {
                    history.add(r.key(), Type.OK, response.body(), r.id());
                    return;
                }
                if (status == 500 && response.body().contains(IdempotencyProblems.OUTCOME_UNKNOWN.toString())) {
                    history.add(r.key(), Type.INFO, "500 outcome unknown", r.id());
                    return;
                }
                history.add(r.key(), Type.FAIL, status + " " + response.body(), r.id());
            } catch (IOException e) {
                history.add(r.key(), Type.FAIL, e.getClass().getSimpleName() + ": " + e.getMessage(), r.id());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                history.add(r.key(), Type.FAIL, "interrupted", r.id());
                return;
            }
            last = node;
            pause(random, 50);
        }
    }

    private static void pause(Random random, int millis) {
        try {
            Thread.sleep(millis + random.nextInt(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /** The findings of a verdict, at most {@code max} of them, one a line. */
    static String findings(HistoryChecker.Verdict verdict, int max) {
        List<String> f = verdict.findings();
        return String.join("\n", f.subList(0, Math.min(max, f.size())))
                + (f.size() > max ? "\n... and " + (f.size() - max) + " more" : "");
    }

    /** The nodes' last lines, for a failure message. */
    String transcripts() {
        StringBuilder b = new StringBuilder();
        for (Node n : nodes) {
            b.append(n.transcript()).append('\n');
        }
        return b.toString();
    }

    @Override
    public void close() {
        try {
            for (Node n : nodes) {
                n.kill();
            }
        } finally {
            threads.shutdownNow();
            database.pool().close();
        }
    }
}
