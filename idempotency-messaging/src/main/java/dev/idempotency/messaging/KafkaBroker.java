package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Spring Kafka: the advice chain of a listener container wraps the listener's {@code onMessage(record, ...)}. A record
 * has no broker-assigned id, so a key expression is required. Requeue and reject are the engine's own exceptions:
 * Kafka has no per-record requeue, the container's error handler decides, and
 * {@link IdempotentListenerAdvice#configure(org.springframework.kafka.listener.DefaultErrorHandler)} teaches the
 * {@code DefaultErrorHandler} which is which.
 */
final class KafkaBroker implements Broker {

    static final KafkaBroker INSTANCE = new KafkaBroker();
    private static final Method VARIABLES;

    static {
        try {
            VARIABLES = KafkaBroker.class.getDeclaredMethod("variables", Object.class, Map.class, Object.class,
                    String.class, int.class, long.class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private KafkaBroker() {
    }

    /** The variables of a key expression, by name: only the signature matters. */
    @SuppressWarnings("unused")
    private static void variables(Object payload, Map<String, String> headers, Object key, String topic,
            int partition, long offset) {
    }

    @Override
    public String name() {
        return "Kafka";
    }

    @Override
    public Method keyVariables() {
        return VARIABLES;
    }

    @Override
    public @Nullable String defaultKey() {
        return null;
    }

    @Override
    public @Nullable Delivery delivery(MethodInvocation invocation) {
        Object[] args = invocation.getArguments();
        if (args.length == 0 || !invocation.getMethod().getName().equals("onMessage")) {
            return null;
        }
        if (args[0] instanceof List<?>) {
            throw new IllegalStateException("an idempotent Kafka listener takes one record at a time: the container"
                    + " delivers a batch, which has no single key (use a record listener, not batchListener)");
        }
        if (!(args[0] instanceof ConsumerRecord<?, ?> record)) {
            return null;
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (Header h : record.headers()) {
            // the last value of a repeated header wins, as Headers.lastHeader reads it
            headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        Object value = record.value();
        Object payload = value instanceof byte[] bytes ? Payloads.readable(bytes, false)
                : value instanceof String text ? Payloads.readable(text, false) : value;
        return new Delivery(new Object[] {payload, headers, record.key(), record.topic(), record.partition(),
                record.offset()}, record.topic() + "-" + record.partition() + "@" + record.offset(), false, value,
                false, headers, 0);
    }

    /** None: a Kafka back-off lives in an error handler, where it cannot be read; {@link TtlCheck} finds beans. */
    @Override
    public Map<String, Duration> declaredDelays(ListableBeanFactory beans) {
        return Map.of();
    }

    @Override
    public RuntimeException requeue(IdempotencyException cause) {
        return cause;
    }

    @Override
    public RuntimeException reject(IdempotencyException cause) {
        return cause;
    }
}
