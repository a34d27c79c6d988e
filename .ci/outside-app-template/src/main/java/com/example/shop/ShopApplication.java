package com.example.shop;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The application: no idempotency configuration at all, only the README's annotated service. */
@SpringBootApplication
public class ShopApplication {

    public static void main(String[] args) {
        SpringApplication.run(ShopApplication.class, args);
    }
}

record OrderRequest(String sku, int quantity) {
}

record OrderReceipt(String approvalNo, String orderId) {
}

/** README.md's service, with a body: each run makes a new order id, and is counted. */
@Service
class OrderService {

    private final AtomicInteger executions = new AtomicInteger();

    @Idempotent(key = "'APPROVAL:' + #approvalNo + ':MAIN'", tier = Tier.REVERSIBLE, ttl = "24h")
    @Transactional
    public OrderReceipt createOrder(String approvalNo, OrderRequest request) {
        executions.incrementAndGet();
        return new OrderReceipt(approvalNo, UUID.randomUUID().toString());
    }

    public int executions() {
        return executions.get();
    }
}
