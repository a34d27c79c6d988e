package dev.idempotency.jdbc;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * Reconciliation: the business numbers written more than once to a business table in a time window, the duplicates
 * the guard did not stop (a path that lacks it, a key that changed between retries, a write made by hand).
 *
 * <pre>{@code
 * DuplicateBusinessNumbers orders = DuplicateBusinessNumbers.builder(dataSource)
 *     .table("orders").numberColumn("approval_no").timestampColumn("created_at")
 *     .window(Duration.ofDays(1))
 *     .build();
 * DuplicateBusinessNumbers.Report report = orders.check();      // the last day
 * report.duplicatedNumbers();                                   // how many numbers were written more than once
 * report.toMarkdown();                                          // the first ones, with their rows and first/last times
 * orders.bindTo(meterRegistry);                                 // gauge idempotency.reconciliation.duplicates
 * scheduler.scheduleWithFixedDelay(orders, 0, 15, TimeUnit.MINUTES);   // a Runnable: check() on a schedule
 * }</pre>
 *
 * <p>Table and column names are checked as the JDBC store checks its table name (plain identifiers, the table
 * optionally {@code schema.table}): they are the only text put into the statements, so none can carry SQL; the window
 * and the limit are bound parameters. The window is bound, and the first and last times read, as the store binds
 * its own instants (the database's dialect: {@code timestamptz} / {@code TIMESTAMP WITH TIME ZONE} as instants,
 * MySQL/MariaDB {@code DATETIME} as UTC). Two statements per check, both ranges of the timestamp column: give it an
 * index (ideally on {@code (timestamp, number)}).
 *
 * <p>Thread-safe.
 */
public final class DuplicateBusinessNumbers implements Runnable {

    /** The name of the gauge of duplicated numbers in the last check's window. */
    public static final String METER = "idempotency.reconciliation.duplicates";

    private static final System.Logger LOG = System.getLogger(DuplicateBusinessNumbers.class.getName());

    private final DataSource dataSource;
    private final String table;
    private final String numberColumn;
    private final String timestampColumn;
    private final Duration window;
    private final int limit;
    private final Clock clock;
    private final @Nullable JdbcDialect configuredDialect;
    private final String list;
    private final String count;
    private final AtomicLong lastDuplicated = new AtomicLong();
    private volatile @Nullable JdbcDialect dialect;

    private DuplicateBusinessNumbers(Builder b) {
        this.dataSource = b.dataSource;
        this.table = Objects.requireNonNull(b.table, "table");
        this.numberColumn = Objects.requireNonNull(b.numberColumn, "numberColumn");
        this.timestampColumn = Objects.requireNonNull(b.timestampColumn, "timestampColumn");
        this.window = b.window;
        this.limit = b.limit;
        this.clock = b.clock;
        this.configuredDialect = b.dialect;
        String n = numberColumn;
        String t = timestampColumn;
        String where = " FROM " + table + " WHERE " + t + " >= ? AND " + t + " < ? ";
        this.list = "SELECT " + n + ", COUNT(*), MIN(" + t + "), MAX(" + t + ")" + where + "GROUP BY " + n
                + " HAVING COUNT(*) > 1 ORDER BY COUNT(*) DESC, " + n;
        this.count = "SELECT COUNT(*) FROM (SELECT " + n + where + "GROUP BY " + n + " HAVING COUNT(*) > 1) d";
    }

    /** Starts a check on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * One business number written more than once.
     *
     * @param businessNumber the value of the number column, as text
     * @param rows           how many rows hold it in the window
     * @param first          the earliest timestamp among them
     * @param last           the latest
     */
    public record Duplicate(String businessNumber, long rows, Instant first, Instant last) {
    }

    /**
     * What one check found.
     *
     * @param table             the business table
     * @param numberColumn      its business-number column
     * @param from              the start of the window (included)
     * @param to                its end (excluded)
     * @param duplicatedNumbers how many numbers were written more than once in the window (all of them)
     * @param duplicates        the first of them, the most rows first, at most the builder's limit
     */
    public record Report(String table, String numberColumn, Instant from, Instant to, long duplicatedNumbers,
            List<Duplicate> duplicates) {

        public Report {
            duplicates = List.copyOf(duplicates);
        }

        /** A Markdown page: the window, the count, and a table of the duplicates listed. */
        public String toMarkdown() {
            StringBuilder md = new StringBuilder("# Business numbers written more than once\n\n")
                    .append("`").append(table).append('.').append(numberColumn).append("`, from ").append(from)
                    .append(" to ").append(to).append(": ").append(duplicatedNumbers).append(" number")
                    .append(duplicatedNumbers == 1 ? "" : "s").append(" written more than once.\n");
            if (!duplicates.isEmpty()) {
                md.append("\n| business number | rows | first | last |\n|---|---|---|---|\n");
                for (Duplicate d : duplicates) {
                    md.append("| ").append(d.businessNumber().replace("|", "\\|").replace("\n", " ")).append(" | ")
                            .append(d.rows()).append(" | ").append(d.first()).append(" | ").append(d.last())
                            .append(" |\n");
                }
                if (duplicates.size() < duplicatedNumbers) {
                    md.append("\n(the first ").append(duplicates.size()).append(" of ").append(duplicatedNumbers)
                            .append(")\n");
                }
            }
            return md.toString();
        }
    }

    /** Checks the window that ends now ({@link Builder#window}) and updates the gauge. */
    public Report check() {
        Instant to = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        return check(to.minus(window), to);
    }

    /**
     * Checks {@code [from, to)} and updates the gauge.
     *
     * @throws IllegalArgumentException if {@code from} is not before {@code to}
     * @throws org.springframework.dao.DataAccessException if the database fails (a column that does not exist, say)
     */
    public Report check(Instant from, Instant to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (!from.isBefore(to)) {
            throw new IllegalArgumentException("DuplicateBusinessNumbers.check: the window must end after it starts,"
                    + " was " + from + " to " + to);
        }
        JdbcDialect d = dialect();
        Connection con = DataSourceUtils.getConnection(dataSource);
        try {
            long duplicated;
            try (PreparedStatement ps = con.prepareStatement(count)) {
                bindWindow(ps, d, from, to);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    duplicated = rs.getLong(1);
                }
            }
            List<Duplicate> found = new ArrayList<>();
            try (PreparedStatement ps = con.prepareStatement(list)) {
                ps.setMaxRows(limit);
                bindWindow(ps, d, from, to);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next() && found.size() < limit) {
                        found.add(new Duplicate(rs.getString(1), rs.getLong(2), d.instant(rs, 3), d.instant(rs, 4)));
                    }
                }
            }
            lastDuplicated.set(duplicated);
            return new Report(table, numberColumn, from, to, duplicated, found);
        } catch (SQLException e) {
            throw new org.springframework.jdbc.UncategorizedSQLException("DuplicateBusinessNumbers.check on "
                    + table + "." + numberColumn, list, e);
        } finally {
            DataSourceUtils.releaseConnection(con, dataSource);
        }
    }

    /** {@link #check()}, for schedulers; a failure is logged (the gauge keeps its last value). */
    @Override
    public void run() {
        try {
            Report report = check();
            if (report.duplicatedNumbers() > 0) {
                LOG.log(System.Logger.Level.WARNING, report.duplicatedNumbers() + " business numbers of " + table
                        + "." + numberColumn + " were written more than once since " + report.from());
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "the reconciliation check of " + table + "." + numberColumn
                    + " failed", e);
        }
    }

    /**
     * Registers the gauge {@value #METER} (tags {@code table}, {@code column}): how many numbers the last check found
     * written more than once (0 before the first). A scrape reads that value; it never queries the table.
     * Needs Micrometer on the class path.
     */
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(METER, lastDuplicated, AtomicLong::get).tag("table", table).tag("column", numberColumn)
                .description("Business numbers written more than once in the reconciliation window: duplicates the"
                        + " idempotency guard did not stop")
                .register(registry);
    }

    private static void bindWindow(PreparedStatement ps, JdbcDialect d, Instant from, Instant to)
            throws SQLException {
        ps.setObject(1, d.timestamp(from));
        ps.setObject(2, d.timestamp(to));
    }

    private JdbcDialect dialect() {
        JdbcDialect d = dialect;
        if (d == null) {
            d = configuredDialect;
            if (d == null) {
                d = JdbcDialect.detect(dataSource, "DuplicateBusinessNumbers: cannot read the database product name;"
                        + " set the dialect with builder(...).dialect(...)");
            }
            dialect = d;
        }
        return d;
    }

    @Override
    public String toString() {
        return "DuplicateBusinessNumbers[" + table + "." + numberColumn + " by " + timestampColumn + ", window "
                + window + "]";
    }

    /** Builds a {@link DuplicateBusinessNumbers}; each identifier is checked when it is set. */
    public static final class Builder {
        private final DataSource dataSource;
        private @Nullable String table;
        private @Nullable String numberColumn;
        private @Nullable String timestampColumn;
        private Duration window = Duration.ofDays(1);
        private int limit = 100;
        private Clock clock = Clock.systemUTC();
        private @Nullable JdbcDialect dialect;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The business table: a plain identifier, optionally {@code schema.table}. */
        public Builder table(String table) {
            this.table = JdbcIdempotencyStore.checkIdentifier("DuplicateBusinessNumbers.Builder.table", table, true);
            return this;
        }

        /** Its business-number column (an order number, an approval number): a plain identifier. */
        public Builder numberColumn(String column) {
            this.numberColumn = JdbcIdempotencyStore.checkIdentifier("DuplicateBusinessNumbers.Builder.numberColumn",
                    column, false);
            return this;
        }

        /** The column that says when a row was written: a plain identifier. */
        public Builder timestampColumn(String column) {
            this.timestampColumn = JdbcIdempotencyStore.checkIdentifier(
                    "DuplicateBusinessNumbers.Builder.timestampColumn", column, false);
            return this;
        }

        /** How far back {@link DuplicateBusinessNumbers#check()} looks; a day unless set. */
        public Builder window(Duration window) {
            Objects.requireNonNull(window, "window");
            if (window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("DuplicateBusinessNumbers.Builder.window must be positive, was "
                        + window);
            }
            this.window = window;
            return this;
        }

        /** How many duplicates a report lists at most (all are counted); 100 unless set. */
        public Builder limit(int limit) {
            if (limit <= 0) {
                throw new IllegalArgumentException("DuplicateBusinessNumbers.Builder.limit must be positive, was "
                        + limit);
            }
            this.limit = limit;
            return this;
        }

        /** What "now" is for {@link DuplicateBusinessNumbers#check()}. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The database's dialect; without it, it is read from the JDBC metadata on the first check. */
        public Builder dialect(JdbcDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /**
         * @throws IllegalStateException if the table or a column is missing
         */
        public DuplicateBusinessNumbers build() {
            if (table == null || numberColumn == null || timestampColumn == null) {
                throw new IllegalStateException("DuplicateBusinessNumbers needs table(...), numberColumn(...) and"
                        + " timestampColumn(...)");
            }
            return new DuplicateBusinessNumbers(this);
        }
    }
}
