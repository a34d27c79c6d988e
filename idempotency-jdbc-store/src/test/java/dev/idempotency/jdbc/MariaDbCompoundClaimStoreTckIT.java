package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store TCK on MariaDB without the claim procedure ({@code schema-mariadb-claim-procedure.sql}): claims in a
 * caller's transaction take the compound statement, as on a database where the procedure was never created.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbCompoundClaimStoreTckIT extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(36).at("TRANSACTION_REPEATABLE_READ")
            .withoutClaimProcedure();

    @Override
    protected RealDatabase database() {
        return database;
    }
}
