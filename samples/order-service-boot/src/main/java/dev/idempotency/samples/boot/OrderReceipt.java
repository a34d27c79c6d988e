package dev.idempotency.samples.boot;

/** What placing an order returns; recorded once and replayed to every retry. */
public record OrderReceipt(long orderId, String approvalNo, String item, int quantity) {
}
