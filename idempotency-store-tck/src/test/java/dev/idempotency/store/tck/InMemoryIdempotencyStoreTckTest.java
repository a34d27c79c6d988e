package dev.idempotency.store.tck;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;

/** The in-memory store passes the TCK up to the concurrency layer (it never joins a transaction). */
class InMemoryIdempotencyStoreTckTest extends AbstractStoreConcurrencyTest {

    @Override
    protected IdempotencyStore createStore() {
        return new InMemoryIdempotencyStore();
    }
}
