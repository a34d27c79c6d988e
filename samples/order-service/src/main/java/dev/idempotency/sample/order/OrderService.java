package dev.idempotency.sample.order;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * The order service: writes one order row per call, and needs {@code processingTime} (800 ms in the story) to do it.
 * The annotation makes it idempotent when {@code @EnableIdempotency} is on; without it (the {@code --unprotected}
 * run) the very same class writes an order for every attempt.
 */
public class OrderService {

    private final JdbcTemplate jdbc;
    private final Duration processingTime;

    public OrderService(DataSource dataSource, Duration processingTime) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.processingTime = processingTime;
    }

    /**
     * Creates the order of one approval. The key is the approval, made outside every retry loop; the claim joins
     * this method's transaction, so it commits with the order row or vanishes with it.
     */
    @Idempotent(key = "'APPROVAL:' + #approvalNo + ':MAIN'", tier = Tier.REVERSIBLE, ttl = "24h")
    @Transactional
    public OrderReceipt createOrder(String approvalNo, OrderRequest request) {
        work();
        String orderId = "ORD-" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        BigDecimal total = request.unitPrice().multiply(BigDecimal.valueOf(request.quantity()))
                .setScale(2, RoundingMode.HALF_UP);
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        jdbc.update("INSERT INTO orders (order_id, approval_no, customer_id, total, created_at) VALUES (?, ?, ?, ?, ?)",
                orderId, approvalNo, request.customerId(), total, Timestamp.from(now));
        return new OrderReceipt(orderId, approvalNo, total, now);
    }

    /** How many orders exist for an approval. */
    public int ordersFor(String approvalNo) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE approval_no = ?", Integer.class,
                approvalNo);
        return n == null ? 0 : n;
    }

    private void work() {
        // stands for the real work (stock checks, pricing, a downstream call): slower than the client's patience
        try {
            Thread.sleep(processingTime.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
