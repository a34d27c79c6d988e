package dev.idempotency.samples.jpa;

/**
 * What placing an order returns: recorded once and replayed to every retry. A record, not the entity: a replay is a
 * copy read from the idempotency table, never a managed entity.
 */
public record OrderReceipt(long orderId, String orderNo, String item, int quantity) {
}
