package dev.idempotency.benchmarks.orders;

/** What placing an order returns, and what a replay must give back. */
public record Receipt(long orderId, String orderNo, String customer, long amountCents) {
}
