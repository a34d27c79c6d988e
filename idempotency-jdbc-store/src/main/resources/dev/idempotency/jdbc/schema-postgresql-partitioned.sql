-- The idempotency table for PostgreSQL (12+), hash-partitioned on key_hash: for a very large table (tens of millions
-- of keys and more), whose index and vacuum work it spreads over 16 partitions of a 16th of the size each. The same
-- columns and constraints as schema-postgresql.sql, which the store verifies; the store's statements are the same
-- (PostgreSQL routes each row by its key_hash). Copy into your migrations; to use another table name, replace every
-- "idempotency_record" below (the partitions', constraints' and index names included) and pass the name to
-- JdbcIdempotencyStore.builder().tableName(). Another number of partitions: change MODULUS and the list together.
-- The two SHA-256 digests are of a domain that refuses any other length than 32 bytes (schema-postgresql.sql says why
-- a domain); a table made by an earlier version of this script is migrated by migrate-postgresql-sha256-domain.sql.
CREATE DOMAIN idempotency_record_sha256 AS BYTEA
    CONSTRAINT idempotency_record_sha256_len CHECK (octet_length(VALUE) = 32);
CREATE TABLE idempotency_record (
    key_hash    idempotency_record_sha256 NOT NULL,
    operation   VARCHAR(255) NOT NULL,
    idem_key    VARCHAR(255) NOT NULL,
    fingerprint idempotency_record_sha256 NOT NULL,
    tier        VARCHAR(16)  NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    result      BYTEA,
    lease_until TIMESTAMPTZ(3),
    created_at  TIMESTAMPTZ(3) NOT NULL,
    expires_at  TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT idempotency_record_pk PRIMARY KEY (key_hash)
) PARTITION BY HASH (key_hash);
CREATE TABLE idempotency_record_p0 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 0);
CREATE TABLE idempotency_record_p1 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 1);
CREATE TABLE idempotency_record_p2 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 2);
CREATE TABLE idempotency_record_p3 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 3);
CREATE TABLE idempotency_record_p4 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 4);
CREATE TABLE idempotency_record_p5 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 5);
CREATE TABLE idempotency_record_p6 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 6);
CREATE TABLE idempotency_record_p7 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 7);
CREATE TABLE idempotency_record_p8 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 8);
CREATE TABLE idempotency_record_p9 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 9);
CREATE TABLE idempotency_record_p10 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 10);
CREATE TABLE idempotency_record_p11 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 11);
CREATE TABLE idempotency_record_p12 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 12);
CREATE TABLE idempotency_record_p13 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 13);
CREATE TABLE idempotency_record_p14 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 14);
CREATE TABLE idempotency_record_p15 PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER 15);
-- one index for the purge (completed rows past their expiry, in expiry order) and for what waits for an operator
-- (NEEDS_REVIEW records, IN_FLIGHT claims stuck past their lease: few, read by status and filtered on lease_until),
-- so a claim writes one entry beside its primary key's; without lease_until, a lease renewal changes no indexed column
CREATE INDEX idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
