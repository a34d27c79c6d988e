package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbAuditIT extends AbstractAuditTest {

    @RegisterExtension
    static final RealDatabase DATABASE = RealDatabase.mariadb(2);

    @Override
    RealDatabase database() {
        return DATABASE;
    }
}
