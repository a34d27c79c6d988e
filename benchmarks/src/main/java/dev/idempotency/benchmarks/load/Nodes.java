package dev.idempotency.benchmarks.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Application nodes as child processes: each an {@link OrderNode} in a JVM of its own, on this JVM's class path, its
 * standard error in a log file. Closing stops them (SIGTERM, then SIGKILL after 20 s) and waits for them.
 */
final class Nodes implements AutoCloseable {

    private static final long START_TIMEOUT_SECONDS = 180;

    private final List<Process> processes;
    private final List<String> baseUrls;

    private Nodes(List<Process> processes, List<String> baseUrls) {
        this.processes = processes;
        this.baseUrls = baseUrls;
    }

    /**
     * Starts {@code count} nodes at once and waits until each listens.
     *
     * @param logs where node {@code i}'s standard error goes: {@code logs + "-node" + i + ".log"}
     */
    static Nodes start(int count, List<String> jvmOptions, String jdbcUrl, String ordersTable, String idempotencyTable,
            int poolSize, String logs) {
        List<Process> processes = new ArrayList<>();
        List<String> urls = new ArrayList<>();
        Nodes nodes = new Nodes(processes, urls);
        try {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            for (int i = 1; i <= count; i++) {
                List<String> command = new ArrayList<>();
                command.add(java);
                command.addAll(jvmOptions);
                command.addAll(List.of("-cp", System.getProperty("java.class.path"), OrderNode.class.getName(),
                        jdbcUrl, ordersTable, idempotencyTable, Integer.toString(poolSize)));
                Path log = Path.of(logs + "-node" + i + ".log");
                Files.createDirectories(log.toAbsolutePath().getParent());
                processes.add(new ProcessBuilder(command).redirectError(log.toFile()).start());
            }
            for (int i = 0; i < count; i++) {
                Process process = processes.get(i);
                CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> listeningLine(process));
                String found;
                try {
                    found = line.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new IllegalStateException("node " + (i + 1) + " did not listen within "
                            + START_TIMEOUT_SECONDS + " s: see " + logs + "-node" + (i + 1) + ".log", e);
                }
                if (found == null) {
                    throw new IllegalStateException("node " + (i + 1) + " exited before it listened (exit "
                            + process.waitFor() + "): see " + logs + "-node" + (i + 1) + ".log");
                }
                urls.add("http://127.0.0.1:" + found.substring(OrderNode.LISTENING.length()).trim());
            }
            return nodes;
        } catch (IOException | ExecutionException | RuntimeException e) {
            nodes.close();
            throw new IllegalStateException("the nodes did not start: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            nodes.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the nodes started", e);
        }
    }

    /** The node's listening line, or null if its output ended first; the rest of its output is read and dropped. */
    private static String listeningLine(Process process) {
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
        try {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(OrderNode.LISTENING)) {
                    Thread drain = new Thread(() -> drain(out), "node-stdout");
                    drain.setDaemon(true);
                    drain.start();
                    return line;
                }
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void drain(BufferedReader out) {
        try {
            while (out.readLine() != null) {
                // a node prints nothing after its listening line; whatever it prints must not block it
            }
        } catch (IOException e) {
            // the node ended
        }
    }

    List<String> baseUrls() {
        return List.copyOf(baseUrls);
    }

    @Override
    public void close() {
        for (Process process : processes) {
            process.destroy();
        }
        for (Process process : processes) {
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
