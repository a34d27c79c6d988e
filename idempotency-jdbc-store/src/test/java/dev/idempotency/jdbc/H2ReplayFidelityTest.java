package dev.idempotency.jdbc;

import dev.idempotency.replay.AbstractReplayFidelityTest;
import dev.idempotency.store.IdempotencyStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Core's replay-fidelity suite, every result type family through a round trip in the H2 store. */
class H2ReplayFidelityTest extends AbstractReplayFidelityTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.h2(4);

    @Override
    protected IdempotencyStore newStore() {
        return database.newStore();
    }
}
