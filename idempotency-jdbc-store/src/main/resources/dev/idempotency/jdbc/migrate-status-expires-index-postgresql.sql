-- Migrates a PostgreSQL table made by an older schema-postgresql.sql (an index on expires_at, and perhaps the partial
-- status index on (status, lease_until)) to the single index of today's script, on (status, expires_at), which serves
-- the purge and the backlog reports both: a claim then writes one index entry fewer, and a lease renewal changes no
-- indexed column (a HOT update). The store works on either table (its statements name no index), so the steps may
-- run while it does. Replace "idempotency_record" by your table's name, the index names included.
-- On a large, busy table, CREATE INDEX blocks writes while it builds: run instead, outside a transaction (in Flyway,
-- a migration of its own), CREATE INDEX CONCURRENTLY IF NOT EXISTS ... then DROP INDEX CONCURRENTLY IF EXISTS ...
-- for each old index. On the hash-partitioned table (schema-postgresql-partitioned.sql) CONCURRENTLY works per
-- partition only: CREATE INDEX ... ON ONLY idempotency_record (status, expires_at), then for each partition
-- CREATE INDEX CONCURRENTLY ... ON idempotency_record_pN (status, expires_at) and ALTER INDEX ... ATTACH PARTITION;
-- the old indexes are then dropped with a plain DROP INDEX (quick, under a short exclusive lock).
CREATE INDEX IF NOT EXISTS idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
DROP INDEX IF EXISTS idempotency_record_expires_at;
DROP INDEX IF EXISTS idempotency_record_status;
