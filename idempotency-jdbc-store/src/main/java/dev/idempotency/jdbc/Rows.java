package dev.idempotency.jdbc;

import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcDialect.SqlBinder;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;

/**
 * The rows of one store's table as its dialect reads and writes them: the statements with the table's name in place,
 * the mapping of a row ({@link JdbcDialect#COLUMNS}), and the few statements the store and its claim strategies
 * ({@link ClaimStrategy}) share. Found once per store, on first use.
 */
record Rows(JdbcDialect dialect, Statements sql) implements ClaimStrategy.RowReader {

    /** The rows of {@code table} in {@code dialect}. */
    static Rows of(JdbcDialect dialect, String table) {
        return new Rows(dialect, dialect.statements(table));
    }

    /** The claim strategy of this dialect. */
    ClaimStrategy claims() {
        return dialect.claimStrategy();
    }

    /** Maps the current row of {@link JdbcDialect#COLUMNS}. */
    @Override
    public IdempotencyRecord read(ResultSet rs) throws SQLException {
        return new IdempotencyRecord(
                rs.getBytes(1),
                rs.getString(2),
                rs.getString(3),
                rs.getBytes(4),
                Tier.valueOf(rs.getString(5)),
                IdempotencyRecord.Status.valueOf(rs.getString(6)),
                rs.getBytes(7),
                dialect.instant(rs, 8),
                dialect.instant(rs, 9),
                dialect.instant(rs, 10));
    }

    /** The row a read of one key hash ({@code sql}, its only parameter) finds. */
    Optional<IdempotencyRecord> query(Connection con, String sql, byte[] keyHash) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            ps.setBytes(1, keyHash);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    /** Whether a plain read finds a row. */
    boolean exists(Connection con, String sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Runs a write; the number of rows it changed. */
    int update(Connection con, String sql, SqlBinder binder) throws SQLException {
        try (PreparedStatement ps = con.prepareStatement(sql)) {
            binder.bind(ps);
            return ps.executeUpdate();
        }
    }

    /** Replaces the observed row with the new claim if it is still in the observed state. */
    boolean replace(Connection con, ClaimRequest r, IdempotencyRecord observed) throws SQLException {
        Instant lease = observed.leaseUntil();
        return update(con, lease == null ? sql.takeOverUnleased() : sql.takeOverLeased(), ps -> {
            ps.setString(1, r.operation());
            ps.setString(2, r.key());
            ps.setBytes(3, r.fingerprint());
            ps.setString(4, r.tier().name());
            dialect.bindInstant(ps, 5, r.leaseUntil());
            dialect.bindInstant(ps, 6, r.now());
            dialect.bindInstant(ps, 7, r.expiresAt());
            ps.setBytes(8, r.keyHash());
            ps.setString(9, observed.status().name());
            if (lease == null) {
                dialect.bindInstant(ps, 10, observed.expiresAt());
            } else {
                dialect.bindInstant(ps, 10, lease);
                dialect.bindInstant(ps, 11, observed.expiresAt());
            }
        }) == 1;
    }

    /** Binds key_hash, status, lease_until (possibly null) and expires_at of an observed record from {@code first}. */
    void bindObserved(PreparedStatement ps, int first, IdempotencyRecord observed) throws SQLException {
        ps.setBytes(first, observed.keyHash());
        ps.setString(first + 1, observed.status().name());
        Instant lease = observed.leaseUntil();
        if (lease == null) {
            ps.setNull(first + 2, dialect.nullTimestampType());
        } else {
            dialect.bindInstant(ps, first + 2, lease);
        }
        dialect.bindInstant(ps, first + 3, observed.expiresAt());
    }
}
