-- The claim procedure for MariaDB (10.6+), beside the table of schema-mariadb.sql: optional, and faster. With it,
-- a claim in the caller's transaction is a CALL of a body the server parsed once per session; without it, the same
-- statements travel as one compound statement that the server parses on every call (docs/stores.md, MariaDB).
-- The store finds it by name, the table's followed by _claim_v1, in the table's database: replace every
-- "idempotency_record" below by your table's name (a name of up to 55 characters).
-- One statement, with semicolons inside its body and none after it: Flyway runs the file as it is; the mysql client
-- needs another delimiter (mysql --delimiter='//' ... < this file). Creating it takes the CREATE ROUTINE privilege,
-- calling it EXECUTE; it runs with its caller's rights (SQL SECURITY INVOKER).
-- The parameters are bound in the order of the table's columns, the claim token last but one; the last is the lock
-- wait in seconds. Parameter names are one letter, and none is a column's name.
CREATE PROCEDURE idempotency_record_claim_v1(
    k BINARY(32),
    o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    i VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    f BINARY(32),
    t VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin,
    l DATETIME(6),
    c DATETIME(6),
    e DATETIME(6),
    n BIGINT,
    w INT)
    MODIFIES SQL DATA
    SQL SECURITY INVOKER
BEGIN
    DECLARE x INT;
    -- a plain read, which takes no lock: a duplicate never holds a lock on a row its owner must still update
    SELECT EXISTS (SELECT 1 FROM idempotency_record WHERE key_hash = k) INTO x;
    IF x THEN
        SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at, expires_at
          FROM idempotency_record WHERE key_hash = k;
    ELSE
        SET STATEMENT innodb_lock_wait_timeout = w FOR
        INSERT INTO idempotency_record (key_hash, operation, idem_key, fingerprint, tier, status, lease_until,
                                        created_at, expires_at, claim_token)
        VALUES (k, o, i, f, t, 'IN_FLIGHT', l, c, e, n)
        ON DUPLICATE KEY UPDATE key_hash = key_hash
        RETURNING claim_token;
    END IF;
END
