package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Spring AMQP: the advice chain of a listener container wraps {@code invokeListener(Channel, Object)}, whose second
 * argument is the delivered {@link Message}. {@link ImmediateRequeueAmqpException} requeues a message whatever the
 * container's {@code defaultRequeueRejected}; {@link AmqpRejectAndDontRequeueException} rejects it without requeue, so
 * that it takes the queue's dead-letter route (or is dropped, without one).
 */
final class RabbitBroker implements Broker {

    static final RabbitBroker INSTANCE = new RabbitBroker();
    private static final Method VARIABLES;

    static {
        try {
            VARIABLES = RabbitBroker.class.getDeclaredMethod("variables", String.class, Object.class, Map.class,
                    String.class, String.class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RabbitBroker() {
    }

    /** The variables of a key expression, by name: only the signature matters. */
    @SuppressWarnings("unused")
    private static void variables(String messageId, Object payload, Map<String, Object> headers, String queue,
            String routingKey) {
    }

    @Override
    public String name() {
        return "RabbitMQ";
    }

    @Override
    public Method keyVariables() {
        return VARIABLES;
    }

    @Override
    public String defaultKey() {
        // the queue keeps apart the copies of one message that an exchange routes to two queues (two consumers)
        return "#queue + '/' + #messageId";
    }

    @Override
    public @Nullable Delivery delivery(MethodInvocation invocation) {
        Object[] args = invocation.getArguments();
        if (args.length != 2 || !invocation.getMethod().getName().equals("invokeListener")) {
            return null;
        }
        if (args[1] instanceof List<?>) {
            throw new IllegalStateException("an idempotent RabbitMQ listener takes one message at a time: the"
                    + " container delivers a batch, which has no single key (turn off consumerBatchEnabled)");
        }
        if (!(args[1] instanceof Message message)) {
            return null;
        }
        MessageProperties p = message.getMessageProperties();
        String queue = p.getConsumerQueue() != null ? p.getConsumerQueue() : "";
        String type = p.getContentType();
        boolean json = type != null && type.contains("json");
        Object payload = Payloads.readable(message.getBody(), json);
        String id = p.getMessageId();
        return new Delivery(new Object[] {id, payload, p.getHeaders(), queue, p.getReceivedRoutingKey()},
                "queue '" + queue + "'" + (id != null ? " message " + id : ""), id != null && !id.isBlank(),
                message.getBody(), json, p.getHeaders(), 1);
    }

    @Override
    public Map<String, Duration> declaredDelays(ListableBeanFactory beans) {
        return RabbitDelays.of(beans);
    }

    @Override
    public RuntimeException requeue(IdempotencyException cause) {
        return new ImmediateRequeueAmqpException(cause.getMessage(), cause);
    }

    @Override
    public RuntimeException reject(IdempotencyException cause) {
        return new AmqpRejectAndDontRequeueException(cause.getMessage(), cause);
    }
}
