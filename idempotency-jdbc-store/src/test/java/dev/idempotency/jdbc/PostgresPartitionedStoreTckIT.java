package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store TCK on PostgreSQL on the hash-partitioned table of {@code schema-postgresql-partitioned.sql}: the store's
 * statements (the claim's savepoint batch, {@code ON CONFLICT}, the takeovers, the purge) and its schema check work on
 * it unchanged.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresPartitionedStoreTckIT extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(36).at("TRANSACTION_READ_COMMITTED")
            .withScript("dev/idempotency/jdbc/schema-postgresql-partitioned.sql");

    @Override
    protected RealDatabase database() {
        return database;
    }
}
