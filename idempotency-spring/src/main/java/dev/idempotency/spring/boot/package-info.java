/**
 * The Spring Boot auto-configuration of {@link dev.idempotency.Idempotent}:
 * {@link dev.idempotency.spring.boot.IdempotencyAutoConfiguration} (store, codec, executor, admin, aspect, metrics),
 * {@link dev.idempotency.spring.boot.IdempotencyPurgeAutoConfiguration} (the purge of expired records) and their
 * {@code idempotency.*} properties, {@link dev.idempotency.spring.boot.IdempotencyProperties}. A plain Spring
 * application uses {@link dev.idempotency.spring.EnableIdempotency} instead and needs nothing from this package.
 */
@NullMarked
package dev.idempotency.spring.boot;

import org.jspecify.annotations.NullMarked;
