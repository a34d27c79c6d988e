package dev.idempotency.sample.order;

import java.math.BigDecimal;

/** What the approval asks for: the body of {@code POST /orders}. */
public record OrderRequest(String approvalNo, String customerId, String sku, int quantity, BigDecimal unitPrice) {
}
