package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractTamperedRowTest;
import dev.idempotency.store.IdempotencyStore;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.springframework.jdbc.core.JdbcTemplate;

/** Core's tampered-row suite against the H2 store: the rows are changed through the SPI's {@code resolve}. */
class H2TamperedRowTest extends AbstractTamperedRowTest {

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
