/**
 * {@link dev.idempotency.Idempotent} on Spring beans: {@link dev.idempotency.spring.EnableIdempotency} registers the
 * {@link dev.idempotency.spring.IdempotentAspect}, which evaluates SpEL keys with a restricted
 * {@link dev.idempotency.spring.KeyResolver} and runs inside the method's {@code @Transactional}, and an executor that
 * sees Spring transactions through {@link dev.idempotency.spring.SpringTransactionBridge}.
 */
@NullMarked
package dev.idempotency.spring;

import org.jspecify.annotations.NullMarked;
