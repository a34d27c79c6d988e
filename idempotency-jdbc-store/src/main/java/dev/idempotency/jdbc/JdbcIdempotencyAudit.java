package dev.idempotency.jdbc;

import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The audit of resolutions by hand ({@link IdempotencyAudit}) in a table beside the store's, created by the dialect's
 * script ({@link JdbcDialect#auditSchemaLocation()}, {@code idempotency_record_audit}).
 *
 * <pre>{@code
 * IdempotencyAdmin admin = IdempotencyAdmin.builder(store).audit(JdbcIdempotencyAudit.of(store)).build();
 * }</pre>
 *
 * <p>It connects as the store does ({@code DataSourceUtils}): inside a Spring-managed transaction on the same
 * {@code DataSource} an entry is written in that transaction, so a resolution run in one (the Boot actuator endpoint
 * runs each so) and its entry commit together or not at all. Outside one, each entry commits on its own. Entries are
 * never updated, and nothing purges them: they are few (one per resolution by hand) and are the record of who
 * decided. The same table keeps the attempts that met a key in trouble ({@link #attempt}), at most
 * {@value IdempotencyAudit#ATTEMPTS_KEPT} per key; {@link #history} and {@link #recent} read the resolutions only.
 * The attempts of a key whose record is gone from the store's table (its outcome expired and was purged, or an
 * operator released it) are deleted by the store's {@link JdbcPurgeJob}, when it is given the audit.
 *
 * <p>Thread-safe.
 */
public final class JdbcIdempotencyAudit implements IdempotencyAudit {

    /** The default table name: the store's default with {@code _audit} after it. */
    public static final String DEFAULT_TABLE_NAME = JdbcIdempotencyStore.DEFAULT_TABLE_NAME + "_audit";

    private static final String COLUMNS = "key_hash, operation, idem_key, tier, status_before, action, actor, reason,"
            + " resolved_at";
    /** What a read returns: every column but the hash, which the caller gave or does not need. */
    private static final String READ = "operation, idem_key, tier, status_before, action, actor, reason, resolved_at";
    /** What the action column of an attempt's row starts with, before the attempt's kind. */
    private static final String ATTEMPT = "ATTEMPT_";

    private final JdbcTemplate jdbc;
    private final String tableName;
    private final @Nullable JdbcDialect configuredDialect;
    private final @Nullable JdbcIdempotencyStore store;
    private final String insert;
    private final String history;
    private final String recent;
    private final String countAttempts;
    private final String attempts;

    private JdbcIdempotencyAudit(DataSource dataSource, String tableName, @Nullable JdbcDialect dialect,
            @Nullable JdbcIdempotencyStore store) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.tableName = tableName;
        this.configuredDialect = dialect;
        this.store = store;
        // the table name is a validated identifier, the only text put into the statements
        this.insert = "INSERT INTO " + tableName + " (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
        // an attempt's row has ATTEMPT_ before its kind in the action column: the resolutions are the other rows
        this.history = "SELECT " + READ + " FROM " + tableName + " WHERE key_hash = ? AND action NOT LIKE '"
                + ATTEMPT + "%' ORDER BY id DESC";
        this.recent = "SELECT " + READ + " FROM " + tableName + " WHERE action NOT LIKE '" + ATTEMPT
                + "%' ORDER BY id DESC";
        this.countAttempts = "SELECT COUNT(*) FROM " + tableName + " WHERE key_hash = ? AND action LIKE '" + ATTEMPT
                + "%'";
        this.attempts = "SELECT " + READ + " FROM " + tableName + " WHERE key_hash = ? AND action LIKE '" + ATTEMPT
                + "%' ORDER BY id";
    }

    /**
     * The audit of {@code store}: on its data source and dialect, in the table named as the store's with
     * {@code _audit} after it ({@code idempotency_record_audit} for the default table).
     */
    public static JdbcIdempotencyAudit of(JdbcIdempotencyStore store) {
        String table = JdbcIdempotencyStore.checkIdentifier("JdbcIdempotencyAudit.of", store.tableName() + "_audit",
                true);
        return new JdbcIdempotencyAudit(store.dataSource(), table, null, store);
    }

    /** Starts an audit on {@code dataSource}, in {@value #DEFAULT_TABLE_NAME} unless told otherwise. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The table's name. */
    public String tableName() {
        return tableName;
    }

    /**
     * Checks that the table exists (one query, on a connection of its own outside any transaction). The Spring
     * integration calls it at startup and logs a warning when it fails.
     *
     * @throws IllegalStateException naming the table and the script that creates it
     */
    public void verifyTable() {
        DataSource dataSource = Objects.requireNonNull(jdbc.getDataSource());
        try (java.sql.Connection con = dataSource.getConnection();
                java.sql.Statement st = con.createStatement()) {
            st.executeQuery("SELECT id FROM " + tableName + " WHERE 1 = 0").close();
        } catch (SQLException e) {
            throw new IllegalStateException("the idempotency audit table " + tableName + " cannot be read ("
                    + e.getMessage() + "): create it with the script " + dialect().auditSchemaLocation(), e);
        }
    }

    private JdbcDialect dialect() {
        if (configuredDialect != null) {
            return configuredDialect;
        }
        return store != null ? store.dialect() : JdbcDialect.of(Objects.requireNonNull(jdbc.getDataSource()));
    }

    /**
     * {@inheritDoc}
     *
     * @throws DataAccessException naming the table (a missing table names the script that creates it)
     */
    @Override
    public void append(byte[] keyHash, Entry e) {
        JdbcDialect dialect = dialect();
        try {
            jdbc.update(insert, ps -> {
                ps.setBytes(1, keyHash);
                ps.setString(2, e.operation());
                ps.setString(3, e.key());
                ps.setString(4, e.tier().name());
                ps.setString(5, e.before().name());
                ps.setString(6, e.action().name());
                ps.setString(7, e.by().actor());
                ps.setString(8, e.by().reason());
                dialect.bindInstant(ps, 9, e.at());
            });
        } catch (DataAccessException ex) {
            throw new IllegalStateException("cannot write to the audit table " + tableName + " (create it with "
                    + dialect.auditSchemaLocation() + "): " + ex.getMostSpecificCause().getMessage(), ex);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>A row of the same table: the status met in {@code status_before}, {@code ATTEMPT_} and the kind in
     * {@code action}, an empty {@code actor}, the detail in {@code reason}, the time in {@code resolved_at}. The key's
     * attempts are counted first (one indexed read), and nothing is written once it has
     * {@value IdempotencyAudit#ATTEMPTS_KEPT}.
     *
     * @throws IllegalStateException naming the table (and the script that creates it)
     */
    @Override
    public void attempt(byte[] keyHash, Attempt a) {
        JdbcDialect dialect = dialect();
        try {
            Long kept = jdbc.queryForObject(countAttempts, Long.class, (Object) keyHash.clone());
            if (kept != null && kept >= ATTEMPTS_KEPT) {
                return;
            }
            jdbc.update(insert, ps -> {
                ps.setBytes(1, keyHash);
                ps.setString(2, a.operation());
                ps.setString(3, a.key());
                ps.setString(4, a.tier().name());
                ps.setString(5, a.met().name());
                ps.setString(6, ATTEMPT + a.kind().name());
                ps.setString(7, "");
                ps.setString(8, a.detail());
                dialect.bindInstant(ps, 9, a.at());
            });
        } catch (DataAccessException ex) {
            throw new IllegalStateException("cannot write to the audit table " + tableName + " (create it with "
                    + dialect.auditSchemaLocation() + "): " + ex.getMostSpecificCause().getMessage(), ex);
        }
    }

    /**
     * Deletes up to {@code batchSize} attempt rows of keys that have no record in {@code storeTable}; never a
     * resolution. One statement that commits on its own; PostgreSQL's skips rows another node is deleting.
     *
     * @return how many rows were deleted
     */
    int purgeAttempts(String storeTable, int batchSize) {
        JdbcDialect dialect = dialect();
        String orphan = "action LIKE '" + ATTEMPT + "%' AND NOT EXISTS (SELECT 1 FROM " + storeTable
                + " s WHERE s.key_hash = " + tableName + ".key_hash)";
        String sql = switch (dialect.name()) {
            case "postgresql" -> "DELETE FROM " + tableName + " WHERE id IN (SELECT id FROM " + tableName + " WHERE "
                    + orphan + " ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)";
            case "h2" -> "DELETE FROM " + tableName + " WHERE " + orphan + " FETCH FIRST ? ROWS ONLY";
            // MySQL and MariaDB
            default -> "DELETE FROM " + tableName + " WHERE " + orphan + " ORDER BY id LIMIT ?";
        };
        try {
            return jdbc.update(sql, batchSize);
        } catch (DataAccessException ex) {
            throw new IllegalStateException("cannot purge the attempts of the audit table " + tableName
                    + " (create it with " + dialect.auditSchemaLocation() + "): "
                    + ex.getMostSpecificCause().getMessage(), ex);
        }
    }

    @Override
    public List<Attempt> attempts(byte[] keyHash, int limit) {
        return limited(limit).query(attempts, (ResultSet rs, int n) -> attempt(rs, dialect()),
                (Object) keyHash.clone());
    }

    private static Attempt attempt(ResultSet rs, JdbcDialect dialect) throws SQLException {
        return new Attempt(rs.getString(1), rs.getString(2), Tier.valueOf(rs.getString(3)),
                Status.valueOf(rs.getString(4)), Attempt.Kind.valueOf(rs.getString(5).substring(ATTEMPT.length())),
                rs.getString(7), Objects.requireNonNull(dialect.instant(rs, 8)));
    }

    @Override
    public List<Entry> history(byte[] keyHash, int limit) {
        JdbcTemplate limited = limited(limit);
        return limited.query(history, row(dialect()), (Object) keyHash.clone());
    }

    @Override
    public List<Entry> recent(int limit) {
        return limited(limit).query(recent, row(dialect()));
    }

    /** A template that fetches at most {@code limit} rows (no dialect-specific LIMIT syntax needed). */
    private JdbcTemplate limited(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        JdbcTemplate t = new JdbcTemplate(Objects.requireNonNull(jdbc.getDataSource()));
        t.setMaxRows(limit);
        t.setFetchSize(Math.min(limit, 100));
        return t;
    }

    private static RowMapper<Entry> row(JdbcDialect dialect) {
        return (ResultSet rs, int n) -> entry(rs, dialect);
    }

    private static Entry entry(ResultSet rs, JdbcDialect dialect) throws SQLException {
        return new Entry(rs.getString(1), rs.getString(2), Tier.valueOf(rs.getString(3)),
                Status.valueOf(rs.getString(4)), Action.valueOf(rs.getString(5)),
                new ResolvedBy(rs.getString(6), rs.getString(7)), Objects.requireNonNull(dialect.instant(rs, 8)));
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyAudit[" + tableName + "]";
    }

    /** Builds a {@link JdbcIdempotencyAudit}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String tableName = DEFAULT_TABLE_NAME;
        private @Nullable JdbcDialect dialect;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The table, created by the dialect's audit script with this name in place of
         * {@code idempotency_record_audit}: a plain SQL identifier, optionally qualified by a schema.
         *
         * @throws IllegalArgumentException if it is not a plain identifier
         */
        public Builder tableName(String tableName) {
            this.tableName = JdbcIdempotencyStore.checkIdentifier("JdbcIdempotencyAudit.Builder.tableName", tableName,
                    true);
            return this;
        }

        /** The database's dialect; without it the audit reads the product name from the JDBC metadata. */
        public Builder dialect(JdbcDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /** The audit. */
        public JdbcIdempotencyAudit build() {
            return new JdbcIdempotencyAudit(dataSource, tableName, dialect, null);
        }
    }
}
