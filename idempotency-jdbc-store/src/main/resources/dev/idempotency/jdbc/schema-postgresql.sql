-- The idempotency table for PostgreSQL (12+). Copy into your migrations; to use another table name, replace every
-- "idempotency_record" below (the constraint and index names included) and pass the name to
-- JdbcIdempotencyStore.builder().tableName().
-- key_hash is SHA-256(operation, scope, NFC(key)): bytes, so no collation or case rule can merge two keys.
-- Timestamps are timestamptz: instants, whatever the session's TimeZone.
CREATE TABLE idempotency_record (
    key_hash    BYTEA        NOT NULL,
    operation   VARCHAR(255) NOT NULL,
    idem_key    VARCHAR(255) NOT NULL,
    fingerprint BYTEA        NOT NULL,
    tier        VARCHAR(16)  NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    result      BYTEA,
    lease_until TIMESTAMPTZ(3),
    created_at  TIMESTAMPTZ(3) NOT NULL,
    expires_at  TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT idempotency_record_pk PRIMARY KEY (key_hash),
    CONSTRAINT idempotency_record_key_hash_len CHECK (octet_length(key_hash) = 32),
    CONSTRAINT idempotency_record_fingerprint_len CHECK (octet_length(fingerprint) = 32)
);
-- one index for the purge (completed rows past their expiry, in expiry order) and for what waits for an operator
-- (NEEDS_REVIEW records, IN_FLIGHT claims stuck past their lease: few, read by status and filtered on lease_until),
-- so a claim writes one entry beside its primary key's; without lease_until, a lease renewal changes no indexed column
CREATE INDEX idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
