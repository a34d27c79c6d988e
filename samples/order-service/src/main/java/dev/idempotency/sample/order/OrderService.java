package dev.idempotency.sample.order;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The order service's business logic: writes one order row per call, and needs {@code processingTime} (800 ms in the
 * story) to do it. Nothing here knows about retries: the guard is {@code @IdempotentRequest} on
 * {@link OrderController}, whose transaction this runs in.
 */
public class OrderService {

    private final JdbcTemplate jdbc;
    private final Duration processingTime;
    private static final RowMapper<OrderReceipt> RECEIPT = (rs, n) -> new OrderReceipt(rs.getString(1),
            rs.getString(2), rs.getBigDecimal(3), rs.getTimestamp(4).toInstant());

    private final CountDownLatch finishNow = new CountDownLatch(1);

    public OrderService(DataSource dataSource, Duration processingTime) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.processingTime = processingTime;
    }

    /** Creates the order of one approval. */
    public OrderReceipt createOrder(OrderRequest request) {
        work();
        String orderId = "ORD-" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        BigDecimal total = request.unitPrice().multiply(BigDecimal.valueOf(request.quantity()))
                .setScale(2, RoundingMode.HALF_UP);
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        jdbc.update("INSERT INTO orders (order_id, approval_no, customer_id, total, created_at) VALUES (?, ?, ?, ?, ?)",
                orderId, request.approvalNo(), request.customerId(), total, Timestamp.from(now));
        return new OrderReceipt(orderId, request.approvalNo(), total, now);
    }

    /** One order, by its id. */
    public Optional<OrderReceipt> order(String orderId) {
        return jdbc.query("SELECT order_id, approval_no, total, created_at FROM orders WHERE order_id = ?", RECEIPT,
                orderId).stream().findFirst();
    }

    /** The orders of an approval, oldest first. */
    public List<OrderReceipt> ordersFor(String approvalNo) {
        return jdbc.query("SELECT order_id, approval_no, total, created_at FROM orders WHERE approval_no = ? "
                + "ORDER BY created_at, order_id", RECEIPT, approvalNo);
    }

    /**
     * Ends the work of every request now and from now on, instead of after {@code processingTime}: the tests hold
     * the work until a point of the story (the client's first timeout, the caller's last attempt) rather than a
     * clock, so that a busy machine does not change the story.
     */
    void finishNow() {
        finishNow.countDown();
    }

    private void work() {
        // stands for the real work (stock checks, pricing, a downstream call): slower than the client's patience
        try {
            finishNow.await(processingTime.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
