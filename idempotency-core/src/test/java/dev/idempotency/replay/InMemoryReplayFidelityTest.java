package dev.idempotency.replay;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;

class InMemoryReplayFidelityTest extends AbstractReplayFidelityTest {

    @Override
    protected IdempotencyStore newStore() {
        return new InMemoryIdempotencyStore();
    }
}
