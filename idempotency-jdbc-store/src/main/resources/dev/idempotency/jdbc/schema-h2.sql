-- The idempotency table for H2 (2.x). Copy into your migrations; to use another table name, replace every
-- "idempotency_record" below (the index name included) and pass the name to JdbcIdempotencyStore.builder().tableName().
CREATE TABLE idempotency_record (
    key_hash    BINARY(32)               NOT NULL,
    operation   VARCHAR(255)             NOT NULL,
    idem_key    VARCHAR(255)             NOT NULL,
    fingerprint BINARY(32)               NOT NULL,
    tier        VARCHAR(16)              NOT NULL,
    status      VARCHAR(16)              NOT NULL,
    result      BLOB,
    lease_until TIMESTAMP(3) WITH TIME ZONE,
    created_at  TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    CONSTRAINT idempotency_record_pk PRIMARY KEY (key_hash)
);
-- one index for the purge (completed rows past their expiry, in expiry order) and for what waits for an operator
-- (NEEDS_REVIEW records, IN_FLIGHT claims stuck past their lease: few, read by status and filtered on lease_until),
-- so a claim writes one entry beside its primary key's; without lease_until, a lease renewal changes no indexed column
CREATE INDEX idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
