/**
 * Idempotent message consumers: {@link dev.idempotency.messaging.IdempotentListenerAdvice}, an advice for a Spring AMQP
 * (RabbitMQ) or Spring Kafka listener container that runs each message at most once per key through the one engine,
 * {@link dev.idempotency.IdempotentExecutor}. See {@code docs/messaging.md}.
 */
@NullMarked
package dev.idempotency.messaging;

import org.jspecify.annotations.NullMarked;
