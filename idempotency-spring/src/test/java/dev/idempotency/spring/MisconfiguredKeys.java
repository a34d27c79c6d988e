package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.spring.HostileKeys.Request;
import org.springframework.stereotype.Service;

/**
 * {@code @Idempotent} methods that can never be applied: key expressions refused when they are compiled, a ttl that
 * does not parse, compensations that are missing or do not fit. A context that holds this bean fails to start
 * ({@link KeyExpressionThroughAspectTest}).
 */
@Service
public class MisconfiguredKeys {

    @Idempotent(key = "T(java.lang.Runtime).getRuntime().availableProcessors()", tier = Tier.REVERSIBLE)
    public String typeReference(Request request) {
        return "ran";
    }

    @Idempotent(key = "new java.io.File('x').getName()", tier = Tier.REVERSIBLE)
    public String constructor(Request request) {
        return "ran";
    }

    @Idempotent(key = "@orderService.toString()", tier = Tier.REVERSIBLE)
    public String beanReference(Request request) {
        return "ran";
    }

    @Idempotent(key = "#requets.customerId", tier = Tier.REVERSIBLE)
    public String misspelledParameter(Request request) {
        return "ran";
    }

    @Idempotent(key = "#id", tier = Tier.REVERSIBLE, ttl = "forever")
    public String badTtl(String id) {
        return "ran";
    }

    @Idempotent(key = "#id", tier = Tier.REVERSIBLE, compensate = "undo")
    public String missingCompensation(String id) {
        return "ran";
    }

    public void undo(long id) {
    }

    @Idempotent(key = "#id", tier = Tier.IRREVERSIBLE, compensate = "undoIrreversible")
    public String irreversibleCompensation(String id) {
        return "ran";
    }

    public void undoIrreversible(String id) {
    }

    @Idempotent(key = "'unclosed", tier = Tier.REVERSIBLE)
    public String unparsable(String id) {
        return "ran";
    }

    @Idempotent(tier = Tier.REVERSIBLE)
    public String noKey(String id) {
        return "ran";
    }
}
