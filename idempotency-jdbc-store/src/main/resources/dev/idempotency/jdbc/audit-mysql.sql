-- The audit (JdbcIdempotencyAudit) for MySQL (8.0+), InnoDB, two kinds of rows. Resolutions by hand: one row per key
-- an operator released, resolved as executed or evicted, with who (actor), why (reason) and when; never updated nor
-- purged, the record of who decided what. Attempts that met a key in trouble (a retry refused, a stale claim taken
-- over or held): action ATTEMPT_ and the kind, the status met in status_before, the detail in reason, an empty
-- actor; at most 50 per key, deleted by JdbcPurgeJob once the key's record is gone from the idempotency table. Copy
-- into your migrations beside the idempotency table; its default name is the store table's with "_audit" after it:
-- to use another, replace every "idempotency_record_audit" below (the index name included) and pass the name to
-- JdbcIdempotencyAudit.builder().tableName(). DATETIME(3) holds UTC, as in the idempotency table.
CREATE TABLE idempotency_record_audit (
    id            BIGINT        NOT NULL AUTO_INCREMENT,
    key_hash      BINARY(32)    NOT NULL,
    operation     VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    idem_key      VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    tier          VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    status_before VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    action        VARCHAR(32)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    actor         VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    reason        VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    resolved_at   DATETIME(3)   NOT NULL,
    PRIMARY KEY (id),
    -- one key's history, newest first
    INDEX idempotency_record_audit_key (key_hash, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
