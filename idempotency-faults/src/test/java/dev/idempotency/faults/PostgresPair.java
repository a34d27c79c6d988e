package dev.idempotency.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A PostgreSQL primary and a streaming standby made by the cluster storm on this machine: {@code initdb} of a
 * primary on port 5433, {@code pg_basebackup -R} of a standby on 5434, both under {@code /tmp/idempotency-storm/}
 * (run as the {@code postgres} OS user when this JVM runs as root), removed by {@link #close()}. The standby is
 * synchronous ({@code synchronous_standby_names = '*'} on the primary: a commit is acknowledged once the standby
 * has flushed it) or asynchronous, then optionally behind a {@link LaggingLink} on 5435. {@link #failOver} stops
 * the primary and promotes the standby; the nodes follow through the multi-host {@link #url()} with
 * {@code targetServerType=primary}.
 *
 * <p>The binaries are those of {@code PG_BINDIR}, else of the newest {@code /usr/lib/postgresql/<version>/bin}.
 * Anything that does not work throws: a suite that asked for the pair fails, never skips.
 */
final class PostgresPair implements AutoCloseable {

    static final int PRIMARY_PORT = 5433;
    static final int STANDBY_PORT = 5434;
    /** Where a lagging link ({@link LaggingLink}) between the standby and the primary listens. */
    static final int LINK_PORT = 5435;
    private static final Path ROOT = Path.of("/tmp/idempotency-storm");

    private final Path bin;
    private final Path dir;
    private final Path primary;
    private final Path standby;
    private final boolean synchronous;
    private final Duration lag;
    private @Nullable LaggingLink link;

    private PostgresPair(Path bin, Path dir, boolean synchronous, Duration lag) {
        this.bin = bin;
        this.dir = dir;
        this.primary = dir.resolve("primary");
        this.standby = dir.resolve("standby");
        this.synchronous = synchronous;
        this.lag = lag;
    }

    /** Makes and starts both clusters, and waits until the standby streams (in sync, if asked). */
    static PostgresPair start(boolean synchronous) {
        return start(synchronous, Duration.ZERO);
    }

    /**
     * The same, the asynchronous standby streaming through a {@link LaggingLink} that delivers the primary's WAL
     * {@code lag} late (none when zero).
     */
    static PostgresPair start(boolean synchronous, Duration lag) {
        if (synchronous && !lag.isZero()) {
            throw new IllegalArgumentException("a synchronous standby with a lag: commits would wait for it");
        }
        removeLeftovers();
        PostgresPair pair = new PostgresPair(binaries(), ROOT.resolve(UUID.randomUUID().toString().substring(0, 8)),
                synchronous, lag);
        try {
            pair.create();
            return pair;
        } catch (RuntimeException | Error e) {
            pair.close();
            throw e;
        }
    }

    /** The URL the nodes use: both hosts, the primary wherever it is. */
    String url() {
        return "jdbc:postgresql://127.0.0.1:" + PRIMARY_PORT + ",127.0.0.1:" + STANDBY_PORT
                + "/postgres?user=postgres&targetServerType=primary&connectTimeout=2&loginTimeout=3&socketTimeout=20";
    }

    boolean synchronous() {
        return synchronous;
    }

    private void create() {
        mkdir(dir);
        run(bin.resolve("initdb").toString(), "-D", primary.toString(), "-U", "postgres", "--auth=trust",
                "--no-sync");
        append(primary.resolve("postgresql.conf"), "port = " + PRIMARY_PORT, "listen_addresses = '127.0.0.1'",
                "unix_socket_directories = '" + dir + "'", "max_connections = 100",
                "synchronous_standby_names = '" + (synchronous ? "*" : "") + "'");
        pgCtl(primary, "start", "-l", dir.resolve("primary.log").toString());
        run(bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p", String.valueOf(PRIMARY_PORT), "-U",
                "postgres", "-D", standby.toString(), "-R", "-X", "stream", "--no-sync");
        // the standby copied the primary's settings: its own port, and no synchronous standby of its own once it is
        // promoted (else every commit of the new primary would wait for a standby that does not exist)
        append(standby.resolve("postgresql.conf"), "port = " + STANDBY_PORT, "synchronous_standby_names = ''");
        if (!lag.isZero()) {
            link = new LaggingLink(LINK_PORT, PRIMARY_PORT, lag);
            // after the primary_conninfo pg_basebackup -R wrote there: the last one wins
            append(standby.resolve("postgresql.auto.conf"), "primary_conninfo = 'host=127.0.0.1 port=" + LINK_PORT
                    + " user=postgres'");
        }
        pgCtl(standby, "start", "-l", dir.resolve("standby.log").toString());
        String wanted = synchronous ? "sync" : "async";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!wanted.equals(replicationState())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the standby on " + STANDBY_PORT + " never streamed (" + wanted
                        + ") from the primary on " + PRIMARY_PORT + "; see " + dir);
            }
            sleep(100);
        }
    }

    /** The primary's view of its standby: {@code sync}, {@code async}, or null while none streams. */
    private String replicationState() {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + PRIMARY_PORT
                + "/postgres?user=postgres"); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'")) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot ask the primary on " + PRIMARY_PORT + " for its standby", e);
        }
    }

    /**
     * Stops the primary ({@code fast}: sessions ended, the shutdown checkpoint written and streamed; or
     * {@code immediate}: the server quits at once, as on a crash, and what the standby has not received is lost),
     * then promotes the standby and waits until it accepts writes.
     */
    void failOver(boolean crash) {
        LaggingLink l = link;
        if (l != null) {
            l.cut(); // the WAL on its way to the standby is lost with the primary
        }
        run(bin.resolve("pg_ctl").toString(), "-D", primary.toString(), "-m", crash ? "immediate" : "fast", "-w",
                "stop");
        pgCtl(standby, "promote");
    }

    private void pgCtl(Path data, String command, String... more) {
        List<String> args = new ArrayList<>(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-w",
                "-t", "60", command));
        args.addAll(List.of(more));
        run(args.toArray(String[]::new));
    }

    @Override
    public void close() {
        LaggingLink l = link;
        if (l != null) {
            l.close();
        }
        stopQuietly(primary);
        stopQuietly(standby);
        delete(dir);
    }

    private void stopQuietly(Path data) {
        if (Files.exists(data.resolve("postmaster.pid"))) {
            try {
                run(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w", "stop");
            } catch (RuntimeException e) {
                // already stopped, or dying: its directory goes next
            }
        }
    }

    /** Clusters a killed test run left behind (they would hold the ports). */
    private static void removeLeftovers() {
        if (!Files.isDirectory(ROOT)) {
            return;
        }
        Path bin = binaries();
        try (Stream<Path> runs = Files.list(ROOT)) {
            for (Path run : runs.toList()) {
                PostgresPair old = new PostgresPair(bin, run, true, Duration.ZERO);
                old.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + ROOT, e);
        }
    }

    private static Path binaries() {
        String configured = System.getenv("PG_BINDIR");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        Path versions = Path.of("/usr/lib/postgresql");
        try (Stream<Path> list = Files.list(versions)) {
            return list.filter(p -> Files.isExecutable(p.resolve("bin/initdb")))
                    .max(Comparator.comparingInt(p -> Integer.parseInt(p.getFileName().toString().replaceAll("\\D",
                            "0"))))
                    .map(p -> p.resolve("bin"))
                    .orElseThrow(() -> new IllegalStateException("no PostgreSQL binaries (initdb, pg_ctl,"
                            + " pg_basebackup) under " + versions + "; set PG_BINDIR"));
        } catch (IOException e) {
            throw new IllegalStateException("no PostgreSQL binaries under " + versions + "; set PG_BINDIR", e);
        }
    }

    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a PostgreSQL tool (as {@code postgres} when this JVM is root: the server refuses to run as root). */
    private static void run(String... command) {
        List<String> args = new ArrayList<>();
        if (root()) {
            args.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        args.addAll(List.of(command));
        try {
            Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", args) + " failed:\n" + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", args), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", args), e);
        }
    }

    private static void mkdir(Path dir) {
        try {
            Files.createDirectories(dir);
            if (root()) {
                Process p = new ProcessBuilder("chown", "postgres", ROOT.toString(), dir.toString()).inheritIO()
                        .start();
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("chown postgres " + dir + " failed");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void append(Path file, String... lines) {
        try {
            Files.writeString(file, "\n" + String.join("\n", lines) + "\n", StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dir, e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
