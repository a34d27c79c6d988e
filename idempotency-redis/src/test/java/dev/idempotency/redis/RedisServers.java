package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;

/**
 * Redis processes a test starts on this machine ({@code redis-server}, its {@code --sentinel} mode and
 * {@code redis-cli}): a Redis Cluster, or a master, its replica and sentinels, in a temporary directory. Run where
 * {@value TestRedis#VARIABLE} is set (as CI does), skipped where it is not; where it is set, a server that cannot be
 * started fails the test. {@link #close()} kills every process it started and deletes the directory, and so does
 * a shutdown hook if the JVM ends first.
 */
final class RedisServers implements AutoCloseable {

    private static final Duration START_WITHIN = Duration.ofSeconds(10);

    final Path dir;
    private final Map<Integer, Process> processes = new LinkedHashMap<>();
    private final Thread hook = new Thread(this::killAll, "redis-servers-cleanup");

    private RedisServers(Path dir) {
        this.dir = dir;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Servers of a test, or the test is skipped when {@value TestRedis#VARIABLE} is not set. */
    static RedisServers open(String name) throws IOException {
        String url = System.getenv(TestRedis.VARIABLE);
        Assumptions.assumeTrue(url != null && !url.isBlank(), TestRedis.VARIABLE + " is not set");
        return new RedisServers(Files.createTempDirectory("idempotency-" + name + "-"));
    }

    /** Starts {@code redis-server} on {@code port} with {@code options}, and waits until it answers. */
    void server(int port, String... options) {
        Path home = dir.resolve(Integer.toString(port));
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0", "--dir",
                home.toString(), "--logfile", home.resolve("log").toString()));
        command.addAll(Arrays.asList(options));
        start(port, home, command);
    }

    /** Starts a sentinel on {@code port} watching the master {@code name} on {@code masterPort}, quickly. */
    void sentinel(int port, String name, int masterPort, int quorum) {
        Path home = dir.resolve(Integer.toString(port));
        Path conf = home.resolve("sentinel.conf");
        try {
            Files.createDirectories(home);
            Files.writeString(conf, String.join("\n",
                    "port " + port,
                    "bind 127.0.0.1",
                    "dir " + home,
                    "logfile " + home.resolve("log"),
                    "sentinel monitor " + name + " 127.0.0.1 " + masterPort + " " + quorum,
                    "sentinel down-after-milliseconds " + name + " 1000",
                    "sentinel failover-timeout " + name + " 5000",
                    "sentinel parallel-syncs " + name + " 1", ""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        start(port, home, List.of("redis-server", conf.toString(), "--sentinel"));
    }

    private void start(int port, Path home, List<String> command) {
        boolean taken;
        try (Socket probe = new Socket("127.0.0.1", port)) {
            taken = probe.isConnected();
        } catch (IOException free) {
            taken = false;  // as it must be
        }
        if (taken) {
            fail("port " + port + " is already in use (a server left by an earlier run?): the suite would talk to it");
        }
        Process p = null;
        try {
            Files.createDirectories(home);
            p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(home.resolve("stdout").toFile())
                    .start();
            processes.put(port, p);
        } catch (IOException e) {
            fail("cannot start " + command.get(0) + " on port " + port + " (" + e.getMessage() + "): the Redis"
                    + " Cluster and Sentinel suites need redis-server and redis-cli on the PATH", e);
        }
        Process started = p;
        await(START_WITHIN, () -> {
            if (!started.isAlive()) {
                fail(String.join(" ", command) + " ended at once: " + log(port));
            }
            return "PONG".equals(cli(port, "ping").strip());
        }, () -> command.get(0) + " on port " + port + " did not answer PING: " + log(port));
    }

    /**
     * A Redis Cluster of the servers on {@code ports} (as many masters as replicas, one replica each), each started
     * here: made by {@code redis-cli --cluster create}, and ready once every node says the cluster is ok and every
     * replica is in sync with its master.
     */
    void cluster(int... ports) {
        for (int port : ports) {
            server(port, "--cluster-enabled", "yes", "--cluster-config-file",
                    dir.resolve(port + "-nodes.conf").toString(), "--cluster-node-timeout", "1000");
        }
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        IntStream.of(ports).forEach(p -> create.add("127.0.0.1:" + p));
        create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        String out = run(create);
        if (!out.contains("All 16384 slots covered")) {
            fail("redis-cli --cluster create failed: " + out);
        }
        await(Duration.ofSeconds(20), () -> IntStream.of(ports).allMatch(p -> cli(p, "cluster", "info")
                .contains("cluster_state:ok") && (cli(p, "role").startsWith("master")
                        || cli(p, "info", "replication").contains("master_link_status:up"))),
                () -> "the cluster on " + Arrays.toString(ports) + " did not become ready: "
                        + cli(ports[0], "cluster", "nodes"));
    }

    /** Kills the server on {@code port} with SIGKILL, and waits until it is gone. */
    void kill(int port) throws InterruptedException {
        Process p = processes.get(port);
        p.destroyForcibly();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            fail("redis-server on port " + port + " did not die of SIGKILL");
        }
    }

    /** What {@code redis-cli -p port args...} prints; empty if it failed. */
    String cli(int port, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        command.addAll(Arrays.asList(args));
        return run(command);
    }

    private static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", command) + " did not end");
            }
            return out;
        } catch (IOException e) {
            return fail("cannot run " + String.join(" ", command) + " (" + e.getMessage() + "): the Redis Cluster"
                    + " and Sentinel suites need redis-cli on the PATH", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until {@code condition} holds, or fails with {@code why}. */
    static void await(Duration within, BooleanSupplier condition, java.util.function.Supplier<String> why) {
        try {
            Awaitility.await().atMost(within).pollInterval(Duration.ofMillis(50)).until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            fail(why.get());
        }
    }

    private String log(int port) {
        try {
            Path home = dir.resolve(Integer.toString(port));
            Path log = Files.exists(home.resolve("log")) ? home.resolve("log") : home.resolve("stdout");
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private void killAll() {
        for (Process p : processes.values()) {
            p.destroyForcibly();
        }
        for (Process p : processes.values()) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // already gone
        }
    }

    /** Kills every process started here and deletes their directory. */
    @Override
    public void close() {
        killAll();
        Runtime.getRuntime().removeShutdownHook(hook);
    }
}
