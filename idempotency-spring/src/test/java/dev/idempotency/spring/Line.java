package dev.idempotency.spring;

import java.math.BigDecimal;

public record Line(String sku, int quantity, BigDecimal price) {
}
