package dev.idempotency.benchmarks.orders;

/** The business transaction: insert one order row. Each guard implements it its own way. */
public interface PlaceOrder {

    /** @return the receipt, or null when the guard (Camel's) skips a duplicate without a recorded result */
    Receipt placeOrder(String orderNo, String customer, long amountCents);
}
