package dev.idempotency.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A Redis Cluster made by the cluster storm: six {@code redis-server --cluster-enabled yes} processes on ports
 * 7100-7105 (three masters, three replicas, {@code redis-cli --cluster create}), a node timeout of one second, no
 * persistence, under {@code /tmp/idempotency-storm-redis/}; {@link #killMaster} kills one master with SIGKILL so that
 * its replica takes over; {@link #close()} kills them all and removes their directory.
 */
final class RedisClusterServers implements AutoCloseable {

    static final int FIRST_PORT = 7100;
    static final int NODES = 6;
    private static final Path ROOT = Path.of("/tmp/idempotency-storm-redis");

    private final Path dir;
    private final Map<Integer, Process> servers = new LinkedHashMap<>();

    private RedisClusterServers(Path dir) {
        this.dir = dir;
    }

    /** Starts the six servers, makes the cluster, and waits until every node says it is ok. */
    static RedisClusterServers start() {
        RedisClusterServers cluster = new RedisClusterServers(ROOT.resolve(UUID.randomUUID().toString()
                .substring(0, 8)));
        try {
            cluster.create();
            return cluster;
        } catch (RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /** The seed nodes, as {@code idempotency.redis.cluster-nodes} takes them. */
    String nodes() {
        List<String> uris = new ArrayList<>();
        for (int port : servers.keySet()) {
            uris.add("redis://127.0.0.1:" + port);
        }
        return String.join(",", uris);
    }

    private void create() {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make " + dir, e);
        }
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        for (int port = FIRST_PORT; port < FIRST_PORT + NODES; port++) {
            // a server a killed run left on one of these ports
            run(false, "redis-cli", "-p", String.valueOf(port), "shutdown", "nosave");
            Path own = dir.resolve(String.valueOf(port));
            try {
                Files.createDirectories(own);
                servers.put(port, new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind",
                        "127.0.0.1", "--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
                        "--cluster-config-file", "nodes.conf", "--dir", own.toString(), "--save", "",
                        "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
                        .redirectErrorStream(true).redirectOutput(own.resolve("redis.log").toFile()).start());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start redis-server on " + port
                        + " (is it installed, on the PATH?)", e);
            }
            create.add("127.0.0.1:" + port);
        }
        for (int port : servers.keySet()) {
            await(port, "PONG", "ping");
        }
        create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        run(true, create.toArray(String[]::new));
        for (int port : servers.keySet()) {
            await(port, "cluster_state:ok", "cluster", "info");
        }
    }

    /** Kills one master with SIGKILL (the first one found); its port. */
    int killMaster() {
        String nodes = run(true, "redis-cli", "-p", String.valueOf(alivePort()), "cluster", "nodes");
        for (String line : nodes.split("\n")) {
            String[] f = line.split(" ");
            if (f.length > 2 && f[2].contains("master") && !f[2].contains("fail")) {
                int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                Process p = servers.get(port);
                if (p != null && p.isAlive()) {
                    p.destroyForcibly();
                    try {
                        p.waitFor(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return port;
                }
            }
        }
        throw new IllegalStateException("no live master in:\n" + nodes);
    }

    /** How many keys the live nodes hold, masters and replicas summed ({@code DBSIZE} each). */
    long keys() {
        long n = 0;
        for (Map.Entry<Integer, Process> e : servers.entrySet()) {
            if (e.getValue().isAlive()) {
                n += Long.parseLong(run(true, "redis-cli", "-p", String.valueOf(e.getKey()), "dbsize").trim());
            }
        }
        return n;
    }

    private int alivePort() {
        for (Map.Entry<Integer, Process> e : servers.entrySet()) {
            if (e.getValue().isAlive()) {
                return e.getKey();
            }
        }
        throw new IllegalStateException("no Redis node alive");
    }

    private static void await(int port, String expected, String... command) {
        List<String> args = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(port)));
        args.addAll(List.of(command));
        AtomicReference<String> last = new AtomicReference<>("");
        try {
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                last.set(run(false, args.toArray(String[]::new)));
                return last.get().contains(expected);
            });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("Redis on " + port + " never answered " + expected + " to "
                    + String.join(" ", command) + "; last:\n" + last.get(), e);
        }
    }

    private static String run(boolean check, String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || (check && p.exitValue() != 0)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        for (Process p : servers.values()) {
            p.destroyForcibly();
        }
        for (Process p : servers.values()) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (Files.exists(dir)) {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove " + dir, e);
            }
        }
    }
}
