package dev.idempotency.sample.order;

import java.math.BigDecimal;
import java.time.Instant;

/** What the order service answers: the same receipt on every retry, when protected. */
public record OrderReceipt(String orderId, String approvalNo, BigDecimal total, Instant createdAt) {
}
