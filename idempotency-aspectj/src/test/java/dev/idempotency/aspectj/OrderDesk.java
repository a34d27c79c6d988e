package dev.idempotency.aspectj;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * A Spring bean whose public method calls its own {@code @Idempotent} one through {@code this}, in one transaction
 * (its own, or the caller's it joins):
 * woven by ajc with the idempotency aspect and with Spring's transaction aspect (which only acts where
 * {@code @EnableTransactionManagement(mode = ASPECTJ)} configured it).
 */
public class OrderDesk {

    // reached through a method: a CGLIB proxy's own fields are not the target's
    private final AtomicInteger runs = new AtomicInteger();
    private final JdbcTemplate jdbc;

    public OrderDesk(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    @Transactional
    public String checkout(String cartId) {
        return place(cartId);
    }

    @Idempotent(key = "'ORDER:' + #cartId", tier = Tier.REVERSIBLE)
    @Transactional
    protected String place(String cartId) {
        String orderId = "ORD-" + cartId + "-" + runs.incrementAndGet();
        jdbc.update("INSERT INTO desk_orders (order_id, cart_id) VALUES (?, ?)", orderId, cartId);
        return orderId;
    }

    public AtomicInteger runs() {
        return runs;
    }

    public int rows(String cartId) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM desk_orders WHERE cart_id = ?", Integer.class, cartId);
        return n == null ? 0 : n;
    }
}
