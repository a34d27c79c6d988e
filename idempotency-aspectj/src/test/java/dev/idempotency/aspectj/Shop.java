package dev.idempotency.aspectj;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A plain class, no Spring: compiled by javac, then woven by ajc (binary weaving of the test classes). Its public
 * methods reach their {@code @Idempotent} work through {@code this}, which no proxy could guard.
 */
public class Shop {

    static final AtomicInteger staticRuns = new AtomicInteger();

    final AtomicInteger runs = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();

    /** Calls its own idempotent method: a self-invocation. */
    public String checkout(String cartId) {
        return placeOrder(cartId, 2);
    }

    @Idempotent(key = "'ORDER:' + #cartId", tier = Tier.REVERSIBLE)
    public String placeOrder(String cartId, int items) {
        return "order " + runs.incrementAndGet() + " of " + cartId + " (" + items + " items)";
    }

    @Idempotent(key = "#parts('PACK', #orderNo, #box)", tier = Tier.REVERSIBLE)
    public String pack(String orderNo, String box) {
        return "packed " + runs.incrementAndGet();
    }

    public String payPrivately(String paymentId) {
        return pay(paymentId);
    }

    @Idempotent(key = "'PAY:' + #paymentId", tier = Tier.IRREVERSIBLE)
    private String pay(String paymentId) {
        return "payment " + runs.incrementAndGet() + " of " + paymentId;
    }

    public String shipProtected(String parcelId) {
        return ship(parcelId);
    }

    @Idempotent(key = "'SHIP:' + #parcelId", tier = Tier.REVERSIBLE)
    protected String ship(String parcelId) {
        return "parcel " + runs.incrementAndGet() + " of " + parcelId;
    }

    @Idempotent(key = "'INVOICE:' + #invoiceNo", tier = Tier.REVERSIBLE)
    static String invoice(String invoiceNo) {
        return "invoice " + staticRuns.incrementAndGet() + " of " + invoiceNo;
    }

    public String browse(String sku) {
        return look(sku);
    }

    @Idempotent(tier = Tier.READ_ONLY)
    String look(String sku) {
        return sku + " read " + reads.incrementAndGet();
    }
}
