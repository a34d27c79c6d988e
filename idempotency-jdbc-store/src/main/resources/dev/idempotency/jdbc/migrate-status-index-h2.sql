-- Adds the status index to an H2 table made before it was in schema-h2.sql: the backlog reports and gauges
-- (NEEDS_REVIEW records, claims stuck past their lease) then read it instead of the whole table. Nothing else changes,
-- and the store works without it (slower reports). Replace "idempotency_record" by your table's name.
CREATE INDEX IF NOT EXISTS idempotency_record_status ON idempotency_record (status, lease_until);
