package dev.idempotency.mcp;

import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** A store that counts the reads of duplicates waiting for a running owner, so a test can know they overlapped. */
final class WatchedStore extends ForwardingStore {

    final AtomicInteger finds = new AtomicInteger();

    WatchedStore(IdempotencyStore delegate) {
        super(delegate);
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        finds.incrementAndGet();
        return super.find(keyHash);
    }
}
