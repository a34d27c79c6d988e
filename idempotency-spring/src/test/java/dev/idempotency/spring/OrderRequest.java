package dev.idempotency.spring;

import java.util.List;

public record OrderRequest(String customerId, List<Line> lines) {
}
