package dev.idempotency.benchmarks;

/** The ways a business transaction can be guarded against running twice, side by side. */
public enum Guard {
    /** No idempotency at all: the baseline. A retry inserts the order again. */
    A,
    /** This library: {@code @Idempotent} on a {@code @Transactional} Spring bean, the JDBC store claiming in the transaction. */
    B,
    /** The same guard written by hand: {@code INSERT ... ON CONFLICT DO NOTHING}, then an {@code UPDATE} of the result. */
    C,
    /** Spring Integration's {@code JdbcMetadataStore.putIfAbsent}, then {@code replace} with the result. */
    D,
    /** Apache Camel's {@code JdbcMessageIdRepository.add} (keeps the key only; a duplicate is skipped, not replayed). */
    E,
    /**
     * An experiment, not a peer: (c) plus the five statements the JDBC store wraps around its claim to give it its own
     * lock timeout (read the setting, savepoint, set, set back, release). If (f) costs what (b) costs, those
     * statements are the gap between (b) and (c).
     */
    F,
    /**
     * This library as (b), on the hash-partitioned table of {@code schema-postgresql-partitioned.sql} (PostgreSQL
     * only): how a user spreads a very large table, measured beside the plain one.
     */
    P
}
