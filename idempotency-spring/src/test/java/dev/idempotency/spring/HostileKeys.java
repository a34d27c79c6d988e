package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/**
 * Key expressions that work, and that fail at the call: the method never runs. Those refused when the method is
 * prepared, at startup, are {@link MisconfiguredKeys}'.
 */
@Service
public class HostileKeys {

    /** Static: a proxy's fields are not the target's. */
    static final AtomicInteger runs = new AtomicInteger();

    public record Customer(String name) {
    }

    public record Request(String customerId, Customer customer) {
        public String explode() {
            throw new IllegalStateException("exploded on purpose");
        }
    }

    @Idempotent(key = "#request.getClass().getName()", tier = Tier.REVERSIBLE)
    public String reflection(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#request.nope", tier = Tier.REVERSIBLE)
    public String unknownProperty(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#request.explode()", tier = Tier.REVERSIBLE)
    public String throwingMethod(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#request.customer.name", tier = Tier.REVERSIBLE)
    public String nullNavigation(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#request.customerId()", tier = Tier.REVERSIBLE)
    public String recordAccessor(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#request.customerId", tier = Tier.REVERSIBLE)
    public String recordProperty(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#p0.customerId + ':' + #a0.customer?.name + ':' + #root.args[0].customerId",
            tier = Tier.REVERSIBLE)
    public String positional(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
    public String numericKey(Long orderNo) {
        return "ran " + runs.incrementAndGet();
    }
}
