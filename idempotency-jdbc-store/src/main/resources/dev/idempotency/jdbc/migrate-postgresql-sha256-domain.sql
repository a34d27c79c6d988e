-- Migrates a PostgreSQL table made by an earlier schema-postgresql.sql, whose two SHA-256 digests are BYTEA columns
-- with a CHECK constraint each, to today's script: both columns of a domain that refuses any other length than 32
-- bytes, and no CHECK constraint on the table. PostgreSQL reads and plans a table's CHECK constraints anew for every
-- INSERT and UPDATE, about a tenth of the server's work for a claim and its completion; the domain's check costs a
-- claim almost nothing and a completion nothing. Replace "idempotency_record" by your table's name, the domain's and
-- the constraints' names included.
-- Nothing is rewritten: the domain is made without its check, so that changing a column's type to it only relabels
-- the column (the table and its indexes keep their files, under a short exclusive lock); the check is then added and
-- validated, which reads the table once under a lock that lets reads through and holds writes back.
-- The store works on the table before and after. Run it while no application uses the table, or expect each pooled
-- connection that prepared the store's statements before it to fail one claim afterwards, once (PostgreSQL: "cached
-- plan must not change result type"): that claim wrote nothing and its method did not run, so a retry is safe.
-- On the hash-partitioned table (schema-postgresql-partitioned.sql), leave out the two statements marked "plain table
-- only": PostgreSQL does not change the type of a partition key, so there key_hash keeps its CHECK constraint and
-- the fingerprint alone moves to the domain.
CREATE DOMAIN idempotency_record_sha256 AS BYTEA;
ALTER TABLE idempotency_record ALTER COLUMN fingerprint TYPE idempotency_record_sha256;
-- plain table only
ALTER TABLE idempotency_record ALTER COLUMN key_hash TYPE idempotency_record_sha256;
ALTER DOMAIN idempotency_record_sha256
    ADD CONSTRAINT idempotency_record_sha256_len CHECK (octet_length(VALUE) = 32) NOT VALID;
ALTER DOMAIN idempotency_record_sha256 VALIDATE CONSTRAINT idempotency_record_sha256_len;
ALTER TABLE idempotency_record DROP CONSTRAINT IF EXISTS idempotency_record_fingerprint_len;
-- plain table only
ALTER TABLE idempotency_record DROP CONSTRAINT IF EXISTS idempotency_record_key_hash_len;
