package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link AbstractSchemaVerificationTest} on MariaDB (`IDEMPOTENCY_MARIADB_URL`). */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbSchemaVerificationIT extends AbstractSchemaVerificationTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(2);

    @Override
    RealDatabase database() {
        return database;
    }
}
