package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractTamperedRowTest;
import dev.idempotency.store.IdempotencyStore;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Core's {@link AbstractTamperedRowTest} through the JDBC store on PostgreSQL (`IDEMPOTENCY_POSTGRES_URL`). */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresTamperedRowIT extends AbstractTamperedRowTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(4);

    @Override
    protected IdempotencyStore newStore() {
        return database.newStore();
    }
}
