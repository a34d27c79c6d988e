package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractTamperedRowTest;
import dev.idempotency.store.IdempotencyStore;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Core's {@link AbstractTamperedRowTest} through the JDBC store on MariaDB (`IDEMPOTENCY_MARIADB_URL`). */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbTamperedRowIT extends AbstractTamperedRowTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(4);

    @Override
    protected IdempotencyStore newStore() {
        return database.newStore();
    }
}
