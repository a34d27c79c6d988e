package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractReplayFidelityTest;
import dev.idempotency.store.IdempotencyStore;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.springframework.jdbc.core.JdbcTemplate;

/** Core's replay-fidelity suite, every result type family through a round trip in the H2 store. */
class H2ReplayFidelityTest extends AbstractReplayFidelityTest {

    private JdbcDataSource dataSource;

    @Override
    protected IdempotencyStore newStore() {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        String table = TestSchema.uniqueTableName();
        TestSchema.create(dataSource, JdbcDialect.h2(), table);
        return JdbcIdempotencyStore.builder(dataSource).tableName(table).build();
    }

    @AfterEach
    void shutDown() {
        new JdbcTemplate(dataSource).execute("SHUTDOWN");
    }
}
