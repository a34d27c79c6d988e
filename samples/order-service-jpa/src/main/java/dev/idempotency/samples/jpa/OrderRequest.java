package dev.idempotency.samples.jpa;

/** An order as a client sends it; the order number is unique among all orders. */
public record OrderRequest(String orderNo, String item, int quantity) {
}
