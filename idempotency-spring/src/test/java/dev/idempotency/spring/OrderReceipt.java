package dev.idempotency.spring;

import java.math.BigDecimal;
import java.util.List;

public record OrderReceipt(String orderId, BigDecimal total, List<Line> lines) {
}
