-- Migrates a MariaDB table made by an older schema-mariadb.sql or schema-mysql.sql (an index on expires_at, and
-- perhaps the status index on status) to the single index of today's script, on (status, expires_at), which serves
-- the purge and the backlog reports both: a claim then writes one index entry fewer, a completion moves one instead
-- of two. The store works on either table (its statements name no index). One statement, which InnoDB runs online
-- (reads and writes go on while the index builds). Replace "idempotency_record" by your table's name, the index
-- names included.
ALTER TABLE idempotency_record
    ADD INDEX IF NOT EXISTS idempotency_record_status_expires_at (status, expires_at),
    DROP INDEX IF EXISTS idempotency_record_expires_at,
    DROP INDEX IF EXISTS idempotency_record_status;
