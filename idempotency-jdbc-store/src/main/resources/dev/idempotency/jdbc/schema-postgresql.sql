-- The idempotency table for PostgreSQL (12+). Copy into your migrations; to use another table name, replace every
-- "idempotency_record" below (the constraint and index names included) and pass the name to
-- JdbcIdempotencyStore.builder().tableName(). A table made by an earlier version of this script (CHECK constraints
-- on the two digests instead of their domain) is migrated by migrate-postgresql-sha256-domain.sql.
-- key_hash is SHA-256(operation, scope, NFC(key)): bytes, so no collation or case rule can merge two keys.
-- Timestamps are timestamptz: instants, whatever the session's TimeZone.
-- The two SHA-256 digests are of a domain that refuses any other length than 32 bytes. A domain rather than CHECK
-- constraints on the table: PostgreSQL reads and plans a table's CHECK constraints anew for every INSERT and UPDATE
-- (a tenth of the server's work for a claim and its completion); a domain's check is planned with the statement,
-- and an UPDATE that leaves both columns alone, as a completion does, runs none.
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
);
-- one index for the purge (completed rows past their expiry, in expiry order) and for what waits for an operator
-- (NEEDS_REVIEW records, IN_FLIGHT claims stuck past their lease: few, read by status and filtered on lease_until),
-- so a claim writes one entry beside its primary key's; without lease_until, a lease renewal changes no indexed column
CREATE INDEX idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
