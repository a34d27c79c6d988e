package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractTamperedRowTest;
import dev.idempotency.store.IdempotencyStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Core's tampered-row suite against the H2 store: the rows are changed through the SPI's {@code resolve}. */
class H2TamperedRowTest extends AbstractTamperedRowTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.h2(4);

    @Override
    protected IdempotencyStore newStore() {
        return database.newStore();
    }
}
