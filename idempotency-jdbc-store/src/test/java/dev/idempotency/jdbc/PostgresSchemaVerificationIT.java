package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link AbstractSchemaVerificationTest} on Postgres (`IDEMPOTENCY_POSTGRES_URL`). */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresSchemaVerificationIT extends AbstractSchemaVerificationTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(2);

    @Override
    RealDatabase database() {
        return database;
    }
}
