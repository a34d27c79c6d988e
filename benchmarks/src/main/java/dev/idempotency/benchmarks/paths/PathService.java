package dev.idempotency.benchmarks.paths;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.benchmarks.orders.Receipt;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One bean, three methods with the same small body: without {@code @Idempotent}, {@code READ_ONLY}, and a writing
 * tier with a SpEL key. The body is kept small so that what is measured is the layer around it.
 */
public class PathService {

    private final AtomicLong ids = new AtomicLong();

    public Receipt plain(String orderNo, long amountCents) {
        return new Receipt(ids.incrementAndGet(), orderNo, "customer", amountCents);
    }

    @Idempotent(tier = Tier.READ_ONLY)
    public Receipt readOnly(String orderNo, long amountCents) {
        return new Receipt(ids.incrementAndGet(), orderNo, "customer", amountCents);
    }

    /** Without {@code @Transactional}: the in-memory store's context has no transaction manager. */
    @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
    public Receipt place(String orderNo, long amountCents) {
        return new Receipt(ids.incrementAndGet(), orderNo, "customer", amountCents);
    }

    /**
     * The same bean for the JDBC stores (H2, PostgreSQL), whose context has a transaction manager: {@code place} is
     * {@code @Transactional} there. (On the in-memory context the startup check rightly refuses a
     * {@code @Transactional} method that no transaction advice would run.)
     */
    public static class Transactional extends PathService {
        @Override
        @org.springframework.transaction.annotation.Transactional
        @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
        public Receipt place(String orderNo, long amountCents) {
            return super.place(orderNo, amountCents);
        }
    }
}
