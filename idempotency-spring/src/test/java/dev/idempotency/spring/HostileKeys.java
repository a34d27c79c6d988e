package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/** Key expressions that must be refused, or that fail: the method never runs. */
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

    @Idempotent(key = "T(java.lang.Runtime).getRuntime().availableProcessors()", tier = Tier.REVERSIBLE)
    public String typeReference(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "new java.io.File('x').getName()", tier = Tier.REVERSIBLE)
    public String constructor(Request request) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "@orderService.toString()", tier = Tier.REVERSIBLE)
    public String beanReference(Request request) {
        return "ran " + runs.incrementAndGet();
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

    @Idempotent(key = "#requets.customerId", tier = Tier.REVERSIBLE)
    public String misspelledParameter(Request request) {
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

    @Idempotent(key = "#id", tier = Tier.REVERSIBLE, ttl = "forever")
    public String badTtl(String id) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(key = "#id", tier = Tier.REVERSIBLE, compensate = "undo")
    public String missingCompensation(String id) {
        return "ran " + runs.incrementAndGet();
    }

    public void undo(long id) {
    }

    @Idempotent(key = "#id", tier = Tier.IRREVERSIBLE, compensate = "undoIrreversible")
    public String irreversibleCompensation(String id) {
        return "ran " + runs.incrementAndGet();
    }

    public void undoIrreversible(String id) {
    }

    @Idempotent(key = "'unclosed", tier = Tier.REVERSIBLE)
    public String unparsable(String id) {
        return "ran " + runs.incrementAndGet();
    }

    @Idempotent(tier = Tier.REVERSIBLE)
    public String noKey(String id) {
        return "ran " + runs.incrementAndGet();
    }
}
