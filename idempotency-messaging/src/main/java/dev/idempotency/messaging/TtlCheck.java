package dev.idempotency.messaging;

import dev.idempotency.IdempotentOperation;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * The startup check of {@link IdempotentListenerAdvice}: a redelivery that comes after the key expired runs the
 * listener again, so the ttl must outlast every delay after which a message comes back. This finds the delays the
 * application declares as beans and warns about each one longer than the ttl.
 */
final class TtlCheck {

    private static final System.Logger LOG = System.getLogger(IdempotentListenerAdvice.class.getName());
    /** Enough steps for any back-off a person configures; an endless one is summed up to here. */
    private static final int MAX_STEPS = 10_000;

    private TtlCheck() {
    }

    /** Every declared delay after which a message comes back, by what declares it. */
    static Map<String, Duration> declaredDelays(ListableBeanFactory beans, Broker broker) {
        Map<String, Duration> delays = new LinkedHashMap<>(broker.declaredDelays(beans));
        beans.getBeansOfType(BackOff.class, false, false).forEach((name, backOff) -> {
            Duration total = total(backOff);
            if (total != null) {
                delays.put("BackOff bean '" + name + "'", total);
            }
        });
        if (ClassUtils.isPresent("org.springframework.core.retry.RetryPolicy", TtlCheck.class.getClassLoader())) {
            beans.getBeansOfType(org.springframework.core.retry.RetryPolicy.class, false, false)
                    .forEach((name, policy) -> {
                        Duration total = total(policy.getBackOff());
                        if (total != null) {
                            delays.put("RetryPolicy bean '" + name + "'", total);
                        }
                    });
        }
        return delays;
    }

    /** Logs a warning for each delay longer than the operation's ttl; returns how many. */
    static int warnIfShorter(IdempotentOperation<?> operation, Map<String, Duration> delays) {
        int warned = 0;
        for (Map.Entry<String, Duration> e : delays.entrySet()) {
            if (e.getValue().compareTo(operation.ttl()) > 0) {
                warned++;
                LOG.log(System.Logger.Level.WARNING, "idempotent listener '" + operation.name() + "': ttl "
                        + operation.ttl() + " is shorter than " + e.getValue() + ", the delay of " + e.getKey()
                        + "; a message that comes back after its key expired runs again. Give the listener a ttl"
                        + " longer than its longest redelivery path, dead-letter replays included"
                        + " (docs/messaging.md)");
            }
        }
        return warned;
    }

    /** The sum of every wait of one run of {@code backOff}, or null if it never waits. */
    static @Nullable Duration total(@Nullable BackOff backOff) {
        if (backOff == null) {
            return null;
        }
        BackOffExecution execution = backOff.start();
        long sum = 0;
        for (int i = 0; i < MAX_STEPS; i++) {
            long next = execution.nextBackOff();
            if (next == BackOffExecution.STOP) {
                break;
            }
            sum += next;
        }
        return sum > 0 ? Duration.ofMillis(sum) : null;
    }
}
