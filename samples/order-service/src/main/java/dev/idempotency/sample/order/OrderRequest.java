package dev.idempotency.sample.order;

import java.math.BigDecimal;

/** What the approval asks for. */
public record OrderRequest(String customerId, String sku, int quantity, BigDecimal unitPrice) {
}
