package dev.idempotency.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.backoff.ExponentialBackOff;
import org.springframework.util.backoff.FixedBackOff;

/** The startup warning when a listener's ttl is shorter than a redelivery delay the application declares. */
class TtlCheckTest {

    private final IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
    private final Logger logger = Logger.getLogger(IdempotentListenerAdvice.class.getName());
    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel() == Level.WARNING) {
                warnings.add(record.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void listen() {
        logger.addHandler(handler);
    }

    @AfterEach
    void stopListening() {
        logger.removeHandler(handler);
    }

    @Test
    void aRetryQueueThatHoldsMessagesLongerThanTheTtlIsNamedWithTheOperation() {
        start(IdempotentListenerAdvice.rabbit(executor, "orders").ttl("1m"),
                "retryQueue", QueueBuilder.durable("orders.retry").ttl(300_000).deadLetterExchange("orders")
                        .build(),
                "shortRetryQueue", QueueBuilder.durable("orders.quick").ttl(5_000).deadLetterExchange("orders")
                        .build(),
                "expiringQueue", QueueBuilder.durable("orders.expiring").ttl(900_000).build());
        assertThat(warnings).singleElement().asString()
                .contains("idempotent listener 'orders'")
                .contains("ttl PT1M is shorter than PT5M")
                .contains("queue 'orders.retry'");
    }

    @Test
    void queuesDeclaredTogetherAreCheckedToo() {
        start(IdempotentListenerAdvice.rabbit(executor, "orders").ttl("1m"),
                "topology", new Declarables(QueueBuilder.durable("orders.parking").ttl(120_000)
                        .deadLetterExchange("").deadLetterRoutingKey("orders").build()));
        assertThat(warnings).singleElement().asString().contains("queue 'orders.parking'");
    }

    @Test
    void aBackOffOrRetryPolicyLongerThanTheTtlIsNamed() {
        start(IdempotentListenerAdvice.kafka(executor, "payments").key("#headers['id']").ttl("30s"),
                "retries", new FixedBackOff(10_000, 5),
                "policy", RetryPolicy.builder().delay(Duration.ofSeconds(1)).multiplier(2).maxRetries(6).build(),
                "quickPolicy", RetryPolicy.builder().delay(Duration.ofSeconds(1)).maxRetries(3).build());
        assertThat(warnings).hasSize(2);
        assertThat(warnings.get(0)).contains("'payments'").contains("PT50S").contains("BackOff bean 'retries'");
        assertThat(warnings.get(1)).contains("'payments'").contains("PT1M3S").contains("RetryPolicy bean 'policy'");
    }

    @Test
    void aTtlLongerThanEveryDelayIsQuiet() {
        start(IdempotentListenerAdvice.rabbit(executor, "orders").ttl("7d"),
                "retryQueue", QueueBuilder.durable("orders.retry").ttl(300_000).deadLetterExchange("orders")
                        .build(),
                "retries", new FixedBackOff(10_000, 5));
        assertThat(warnings).isEmpty();
    }

    @Test
    void theSumOfABackOffIsEveryWaitOfOneRun() {
        assertThat(TtlCheck.total(new FixedBackOff(1_000, 3))).isEqualTo(Duration.ofSeconds(3));
        assertThat(TtlCheck.total(new FixedBackOff(0, 3))).isNull();
        ExponentialBackOff exponential = new ExponentialBackOff(1_000, 2.0);
        exponential.setMaxAttempts(3);
        assertThat(TtlCheck.total(exponential)).isEqualTo(Duration.ofSeconds(7));
    }

    /** Starts a context with the advice and the other beans, given as name, instance, name, instance, ... */
    @SuppressWarnings("unchecked")
    private void start(IdempotentListenerAdvice.Builder advice, Object... beans) {
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean("advice", IdempotentListenerAdvice.class, advice::build);
            for (int i = 0; i < beans.length; i += 2) {
                Object bean = beans[i + 1];
                context.registerBean((String) beans[i], (Class<Object>) bean.getClass(), () -> bean);
            }
            context.refresh();
        }
    }
}
