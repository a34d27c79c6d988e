package dev.idempotency.benchmarks.orders;

import dev.idempotency.benchmarks.Database;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * How many bytes the database's write-ahead log has grown by: PostgreSQL's WAL position ({@code pg_current_wal_lsn()}),
 * MariaDB's redo log sequence number ({@code Innodb_lsn_current}). Server-wide, so a trial's figure holds only its own
 * writes when it runs alone. Full-page images are in it: the first change of a page after a checkpoint logs the whole
 * page, which is what a table too large for the server's cache costs when its keys land on random pages.
 */
final class LogWritten {

    private final DataSource pool;
    private final String query;

    LogWritten(Database db, DataSource pool) {
        this.pool = pool;
        this.query = db == Database.MARIADB
                ? "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_LSN_CURRENT'"
                : "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint";
    }

    /** The log's position now, in bytes; -1 if it cannot be read. */
    long position() {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(query)) {
            return rs.next() ? Long.parseLong(rs.getString(1).trim()) : -1;
        } catch (SQLException | RuntimeException e) {
            System.err.println("cannot read the database's log position, no log figure: " + e.getMessage());
            return -1;
        }
    }
}
