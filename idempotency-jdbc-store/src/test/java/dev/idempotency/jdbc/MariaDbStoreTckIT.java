package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store TCK on MariaDB with the claim procedure, REPEATABLE READ (InnoDB's default, set explicitly): the fuzz
 * inside outer transactions is also a deadlock test.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbStoreTckIT extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(36).at("TRANSACTION_REPEATABLE_READ");

    @Override
    protected RealDatabase database() {
        return database;
    }
}
