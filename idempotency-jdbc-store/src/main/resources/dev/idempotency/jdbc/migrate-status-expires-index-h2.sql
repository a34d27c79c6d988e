-- Migrates an H2 table made by an older schema-h2.sql (an index on expires_at, and perhaps the status index on
-- (status, lease_until)) to the single index of today's script, on (status, expires_at), which serves the purge and
-- the backlog reports both: a claim then writes one index entry fewer, a lease renewal moves none. The store works on
-- either table (its statements name no index). Replace "idempotency_record" by your table's name, the index names
-- included.
CREATE INDEX IF NOT EXISTS idempotency_record_status_expires_at ON idempotency_record (status, expires_at);
DROP INDEX IF EXISTS idempotency_record_expires_at;
DROP INDEX IF EXISTS idempotency_record_status;
