package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractReplayFidelityTest;
import dev.idempotency.store.IdempotencyStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** Core's {@link AbstractReplayFidelityTest} through the JDBC store on MariaDB (`IDEMPOTENCY_MARIADB_URL`). */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_MARIADB_URL", matches = ".+")
class MariaDbReplayFidelityIT extends AbstractReplayFidelityTest {

    private static RealDatabase database;

    @BeforeAll
    static void connect() {
        database = new RealDatabase("IDEMPOTENCY_MARIADB_URL", JdbcDialect.mysql());
    }

    @AfterAll
    static void disconnect() {
        database.close();
    }

    @Override
    protected IdempotencyStore newStore() {
        return database.newStore();
    }

    @AfterEach
    void dropTables() {
        database.dropTables();
    }
}
