package dev.idempotency.benchmarks.paths;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.benchmarks.orders.Receipt;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.transaction.annotation.Transactional;

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

    /** {@code @Transactional} applies where the context has a transaction manager (H2, PostgreSQL), not in memory. */
    @Transactional
    @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
    public Receipt place(String orderNo, long amountCents) {
        return new Receipt(ids.incrementAndGet(), orderNo, "customer", amountCents);
    }
}
