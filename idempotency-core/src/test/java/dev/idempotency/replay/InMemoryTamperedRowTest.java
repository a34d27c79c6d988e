package dev.idempotency.replay;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;

class InMemoryTamperedRowTest extends AbstractTamperedRowTest {

    @Override
    protected IdempotencyStore newStore() {
        return new InMemoryIdempotencyStore();
    }
}
