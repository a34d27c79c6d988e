-- Adds the status index to a PostgreSQL table made before it was in schema-postgresql.sql: the backlog reports and
-- gauges (NEEDS_REVIEW records, claims stuck past their lease) then read it instead of the whole table. Partial:
-- completed rows, nearly all of the table, are not in it, so it stays small. Nothing else changes, and the store
-- works without it (slower reports). Replace "idempotency_record" by your table's name. On a large, busy table
-- prefer CREATE INDEX CONCURRENTLY (outside a transaction: in Flyway, a migration of its own).
CREATE INDEX IF NOT EXISTS idempotency_record_status ON idempotency_record (status, lease_until)
    WHERE status <> 'COMPLETED';
