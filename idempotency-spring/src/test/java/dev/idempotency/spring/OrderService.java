package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

/** A bean with no interface: reached through a CGLIB proxy. Writes an order row in its own transaction. */
@Service
public class OrderService {

    /** What the tests observe (fields of a proxy are not the target's: reach them through {@link #state()}). */
    public static final class State {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger reads = new AtomicInteger();
        final AtomicBoolean rollbackAfterReturn = new AtomicBoolean();
        /** Called at the start of each run; the 16-thread test holds the run here until all callers arrived. */
        volatile Runnable onRun = () -> { };
    }

    private final State state = new State();
    private final AtomicInteger runs = state.runs;
    private final AtomicInteger reads = state.reads;
    private final JdbcTemplate jdbc;

    public OrderService(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    @Idempotent(key = "'APPROVAL:' + #approvalNo + ':MAIN'", tier = Tier.REVERSIBLE, ttl = "24h")
    @Transactional
    public OrderReceipt createOrder(String approvalNo, OrderRequest request) {
        int run = runs.incrementAndGet();
        state.onRun.run();
        BigDecimal total = request.lines().stream()
                .map(l -> l.price().multiply(BigDecimal.valueOf(l.quantity())))
                .reduce(BigDecimal.ZERO, BigDecimal::add)
                .setScale(2, RoundingMode.HALF_UP);
        String orderId = "ORD-" + approvalNo + "-" + run;
        jdbc.update("INSERT INTO orders (order_id, approval_no, total) VALUES (?, ?, ?)", orderId, approvalNo, total);
        if (state.rollbackAfterReturn.getAndSet(false)) {
            // the method returns normally, and its own @Transactional then rolls back
            TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
        }
        return new OrderReceipt(orderId, total, request.lines());
    }

    @Idempotent(key = "#approvalNo", tier = Tier.REVERSIBLE)
    public OrderReceipt createWithPlainKey(String approvalNo, OrderRequest request) {
        runs.incrementAndGet();
        return new OrderReceipt("ORD-" + approvalNo, BigDecimal.ONE, request.lines());
    }

    @Idempotent(tier = Tier.READ_ONLY)
    public OrderReceipt find(String orderId) {
        reads.incrementAndGet();
        return new OrderReceipt(orderId, new BigDecimal("1.00"), java.util.List.of());
    }

    @Idempotent(key = "'RESERVE:' + #sku", tier = Tier.REVERSIBLE, lockTimeout = "5s")
    public int reserve(String sku, int quantity) {
        return runs.incrementAndGet() * 100 + quantity;
    }

    public State state() {
        return state;
    }

    public int orderRows(String approvalNo) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE approval_no = ?", Integer.class,
                approvalNo);
        return n == null ? 0 : n;
    }

}
