-- The idempotency table for MySQL (8.0+), InnoDB; MariaDB has its own, schema-mariadb.sql (this one still serves
-- MariaDB with JdbcIdempotencyStore.builder(..).dialect(JdbcDialect.mysql())). Copy into your migrations; to use another
-- table name, replace every "idempotency_record" below (the index name included) and pass the name to
-- JdbcIdempotencyStore.builder().tableName().
-- key_hash is SHA-256(operation, scope, NFC(key)) as BINARY(32): no collation, case-folding or trailing-space rule
-- can merge two keys. The readable key is utf8mb4 with a binary collation, so any key is stored as sent.
-- DATETIME(3) holds UTC: the store writes and reads it as UTC explicitly, whatever the session's time_zone.
CREATE TABLE idempotency_record (
    key_hash    BINARY(32)   NOT NULL,
    operation   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    idem_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    fingerprint BINARY(32)   NOT NULL,
    tier        VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    status      VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    result      LONGBLOB,
    lease_until DATETIME(3),
    created_at  DATETIME(3)  NOT NULL,
    expires_at  DATETIME(3)  NOT NULL,
    PRIMARY KEY (key_hash),
    -- one index for the purge (completed rows past their expiry, in expiry order) and for what waits for an operator
    -- (NEEDS_REVIEW records, IN_FLIGHT claims stuck past their lease: few, read by status and filtered on
    -- lease_until), so a claim writes one entry beside its primary key. Never lease_until in it: then every lease
    -- renewal moved an index entry, and InnoDB's locks on those entries made renewals of different keys in concurrent
    -- transactions wait for each other
    INDEX idempotency_record_status_expires_at (status, expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
