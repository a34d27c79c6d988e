package dev.idempotency.spring.tiers;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.spring.tiers.TierService.Hold;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** What the outside world saw of {@link TierService}: every real execution, every compensation, every gate call. */
final class World {

    final AtomicInteger quotes = new AtomicInteger();
    final AtomicInteger orders = new AtomicInteger();
    final AtomicInteger reservations = new AtomicInteger();
    final AtomicInteger labels = new AtomicInteger();
    final AtomicInteger holds = new AtomicInteger();
    final AtomicInteger refunds = new AtomicInteger();
    final AtomicInteger transfers = new AtomicInteger();
    final List<Release> releases = new CopyOnWriteArrayList<>();
    final List<ConfirmationGate.Call> gateAsked = new CopyOnWriteArrayList<>();

    /**
     * One compensation, with what it saw when it ran.
     *
     * @param hold          the result of the attempt being undone
     * @param ledgerRows    the hold's ledger rows visible to the compensation (0 once the transaction rolled back)
     * @param claimVisible  whether the key's claim was still in the idempotency table
     */
    record Release(Hold hold, int ledgerRows, boolean claimVisible) {
    }
}
