package dev.idempotency.benchmarks.orders;

import dev.idempotency.benchmarks.Database;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The CPU time the database spent on the pool's connections: each connection's server process (PostgreSQL,
 * {@code pg_backend_pid()}) or thread (MariaDB, {@code information_schema.PROCESSLIST.TID}), read from
 * {@code /proc/<id>/schedstat} (nanoseconds on a CPU), so the server must run on this machine. The server's
 * background work (WAL writer, checkpointer, InnoDB's purge and flush threads) is not in it, nor other clients'.
 */
final class BackendCpu {

    private final List<Path> stats;

    private BackendCpu(List<Path> stats) {
        this.stats = stats;
    }

    /** The ids of all {@code size} connections of {@code pool}, taken at once so that each is a different one. */
    static BackendCpu of(Database db, DataSource pool, int size) {
        String query = db == Database.MARIADB
                ? "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"
                : "SELECT pg_backend_pid()";
        List<Connection> held = new ArrayList<>();
        List<Path> stats = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                Connection c = pool.getConnection();
                held.add(c);
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(query)) {
                    if (rs.next()) {
                        Path p = Path.of("/proc", rs.getString(1), "schedstat");
                        if (Files.isReadable(p)) {
                            stats.add(p);
                        }
                    }
                }
            }
        } catch (SQLException e) {
            System.err.println("cannot find the database's processes, no backend CPU figure: " + e.getMessage());
            stats.clear();
        } finally {
            for (Connection c : held) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // back to the pool or gone: nothing to do either way
                }
            }
        }
        return new BackendCpu(stats.size() == size ? stats : List.of());
    }

    /** How many server processes or threads are summed (0: none could be read, and {@link #nanos()} is -1). */
    int count() {
        return stats.size();
    }

    /** Their CPU time so far, in nanoseconds; -1 if unknown. */
    long nanos() {
        if (stats.isEmpty()) {
            return -1;
        }
        long sum = 0;
        for (Path p : stats) {
            try {
                sum += Long.parseLong(Files.readString(p).trim().split("\\s+")[0]);
            } catch (IOException | RuntimeException e) {
                return -1; // a connection was replaced (its process gone): no honest figure for this iteration
            }
        }
        return sum;
    }
}
