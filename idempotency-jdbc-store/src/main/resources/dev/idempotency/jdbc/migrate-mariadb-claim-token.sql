-- Migrates a MariaDB table made by schema-mysql.sql (the script MariaDB used before it had a dialect of its own) to
-- schema-mariadb.sql: one nullable column, no rewrite of existing rows' data. Replace "idempotency_record" by your
-- table's name. Until it has run, keep the old statements with JdbcIdempotencyStore.builder(..).dialect(JdbcDialect.mysql()).
ALTER TABLE idempotency_record ADD COLUMN claim_token BIGINT;
