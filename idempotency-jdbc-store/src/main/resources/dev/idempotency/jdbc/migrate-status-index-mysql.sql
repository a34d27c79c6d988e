-- Adds the status index to a MySQL or MariaDB table made before it was in schema-mysql.sql / schema-mariadb.sql:
-- the backlog reports and gauges (NEEDS_REVIEW records, claims stuck past their lease) then read it instead of the
-- whole table. InnoDB builds it online (reads and writes go on). Nothing else changes, and the store works without it
-- (slower reports). Replace "idempotency_record" by your table's name.
CREATE INDEX idempotency_record_status ON idempotency_record (status);
