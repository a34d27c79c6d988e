package dev.idempotency.samples.boot;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders: at most once per approval number, whatever the client retries. */
@Service
public class OrderService {

    private final JdbcClient jdbc;

    public OrderService(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Places an order. The idempotency claim and the recorded receipt are written in this method's transaction, with
     * the order row: they commit together or vanish together.
     *
     * @throws IllegalArgumentException if the quantity is not positive (after the insert: the rollback undoes it)
     */
    @Transactional
    @Idempotent(key = "'ORDER:' + #request.approvalNo()", tier = Tier.REVERSIBLE)
    public OrderReceipt createOrder(OrderRequest request) {
        KeyHolder key = new GeneratedKeyHolder();
        jdbc.sql("INSERT INTO orders (approval_no, item, quantity) VALUES (?, ?, ?)")
                .params(request.approvalNo(), request.item(), request.quantity())
                .update(key, "id");
        if (request.quantity() <= 0) {
            throw new IllegalArgumentException("quantity must be positive, was " + request.quantity());
        }
        return new OrderReceipt(key.getKey().longValue(), request.approvalNo(), request.item(), request.quantity());
    }

    /** How many orders were placed. */
    public long count() {
        return jdbc.sql("SELECT COUNT(*) FROM orders").query(Long.class).single();
    }
}
