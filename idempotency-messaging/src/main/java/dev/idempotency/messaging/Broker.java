package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * What differs between Spring AMQP and Spring Kafka: where the message is in the intercepted call, what a key
 * expression may read, and how a listener container is told to requeue or to give up on a message. Each
 * implementation is loaded only when its broker is chosen, so that the other's client need not be on the classpath.
 */
interface Broker {

    /** The broker's name in messages ("RabbitMQ", "Kafka"). */
    String name();

    /** A method whose parameter names are the variables a key expression reads ({@code #messageId}, ...). */
    Method keyVariables();

    /** The key expression used when the builder sets none, or null when this broker needs one. */
    @Nullable String defaultKey();

    /**
     * The delivery in an intercepted call, or null when the call is not a delivery (an advised method other than
     * the listener's, such as {@code toString}).
     *
     * @throws IllegalStateException for a batch of messages, which has no single key
     */
    @Nullable Delivery delivery(MethodInvocation invocation);

    /** The exception that makes the container deliver the message again later, without counting it as a failure. */
    RuntimeException requeue(IdempotencyException cause);

    /**
     * The delays after which the application's broker topology, declared as beans, sends a message back (a retry
     * queue), by what declares them; see {@link TtlCheck}.
     */
    Map<String, Duration> declaredDelays(ListableBeanFactory beans);

    /** The exception that makes the container give up on the message (its dead-letter route), without retrying it. */
    RuntimeException reject(IdempotencyException cause);

    /**
     * One message.
     *
     * @param variables    the values of the key variables, in the order of {@link #keyVariables()}
     * @param source       where it came from, for messages ({@code queue 'orders'}, {@code orders-3@42})
     * @param hasMessageId whether it carries the broker's message id, which the default key needs
     * @param body         the message's payload as delivered: its bytes, its text, or the object the consumer
     *                     deserialized it to (Kafka); null for none
     * @param json         whether a content type says the body is JSON
     * @param headers      its headers, as {@code #headers} reads them
     * @param payloadIndex where {@code #payload} is in {@code variables}
     */
    record Delivery(@Nullable Object[] variables, String source, boolean hasMessageId, @Nullable Object body,
            boolean json, Map<String, ?> headers, int payloadIndex) {
    }
}
