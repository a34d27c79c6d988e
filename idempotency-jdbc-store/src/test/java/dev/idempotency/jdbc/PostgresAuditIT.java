package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresAuditIT extends AbstractAuditTest {

    @RegisterExtension
    static final RealDatabase DATABASE = RealDatabase.postgres(2);

    @Override
    RealDatabase database() {
        return DATABASE;
    }
}
