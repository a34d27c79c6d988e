package dev.idempotency.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;

/** What the advice tells a RabbitMQ container about a message it cannot key, without a broker. */
class RabbitAdviceTest {

    /** The shape of Spring AMQP's ContainerDelegate, whose invokeListener the container's advice chain wraps. */
    interface ContainerDelegate {
        void invokeListener(Object channel, Object data);
    }

    private final IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
    private final AtomicInteger runs = new AtomicInteger();

    @Test
    void aMessageWithoutIdIsRejectedWithAMessageNamingTheListenerTheQueueAndTheWayOut() {
        IdempotentListenerAdvice advice = IdempotentListenerAdvice.rabbit(executor, "orders").build();
        Message message = onQueue(MessageBuilder.withBody("x".getBytes(StandardCharsets.UTF_8)).build(), "orders.q");
        assertThatThrownBy(() -> advice.invoke(invocation(message)))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasCauseInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("RabbitMQ listener 'orders'")
                .hasMessageContaining("queue 'orders.q' has no message id")
                .hasMessageContaining("rejected without requeue");
        assertThat(runs).hasValue(0);
    }

    @Test
    void aKeyReadingAMissingHeaderNamesTheHeader() {
        IdempotentListenerAdvice advice = IdempotentListenerAdvice.rabbit(executor, "orders")
                .key("#headers['orderNo']").build();
        Message message = MessageBuilder.withBody("x".getBytes(StandardCharsets.UTF_8)).setMessageId("m-1").build();
        assertThatThrownBy(() -> advice.invoke(invocation(message)))
                .isInstanceOf(AmqpRejectAndDontRequeueException.class)
                .hasMessageContaining("#headers['orderNo']");
        assertThat(runs).hasValue(0);
    }

    @Test
    void theSameIdOnTwoQueuesIsTwoKeys() throws Throwable {
        IdempotentListenerAdvice advice = IdempotentListenerAdvice.rabbit(executor, "orders").build();
        for (String queue : List.of("billing", "shipping", "billing")) {
            advice.invoke(invocation(onQueue(MessageBuilder.withBody(new byte[0]).setMessageId("m-1").build(), queue)));
        }
        assertThat(runs).hasValue(2);
    }

    @Test
    void aBatchIsRefused() {
        IdempotentListenerAdvice advice = IdempotentListenerAdvice.rabbit(executor, "orders").build();
        assertThatThrownBy(() -> advice.invoke(invocation(List.of())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("one message at a time");
    }

    @Test
    void readOnlyIsRefused() {
        assertThatThrownBy(() -> IdempotentListenerAdvice.rabbit(executor, "orders").tier(dev.idempotency.Tier.READ_ONLY)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("READ_ONLY guards nothing");
    }

    /** As the container sets it on a message it received. */
    private static Message onQueue(Message message, String queue) {
        message.getMessageProperties().setConsumerQueue(queue);
        return message;
    }

    private MethodInvocation invocation(Object data) {
        Method method;
        try {
            method = ContainerDelegate.class.getMethod("invokeListener", Object.class, Object.class);
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
        Object[] args = {null, data};
        return new MethodInvocation() {
            @Override
            public Method getMethod() {
                return method;
            }

            @Override
            public Object[] getArguments() {
                return args;
            }

            @Override
            public Object proceed() {
                runs.incrementAndGet();
                return null;
            }

            @Override
            public Object getThis() {
                return null;
            }

            @Override
            public AccessibleObject getStaticPart() {
                return method;
            }
        };
    }
}
