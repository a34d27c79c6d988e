package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The store TCK on PostgreSQL, READ COMMITTED (the default, set explicitly). */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresStoreTckIT extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(36).at("TRANSACTION_READ_COMMITTED");

    @Override
    protected RealDatabase database() {
        return database;
    }
}
