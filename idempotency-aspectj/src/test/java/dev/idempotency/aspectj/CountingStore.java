package dev.idempotency.aspectj;

import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyStore;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** Counts the claims a store is asked for: one per guarded call, whatever way the advice is applied. */
final class CountingStore extends ForwardingStore {

    final AtomicInteger claims = new AtomicInteger();
    /** Claims made while a Spring-managed transaction was active: the claim joins it. */
    final AtomicInteger claimsInTransaction = new AtomicInteger();

    CountingStore(IdempotencyStore delegate) {
        super(delegate);
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        claims.incrementAndGet();
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            claimsInTransaction.incrementAndGet();
        }
        return super.claim(request);
    }
}
