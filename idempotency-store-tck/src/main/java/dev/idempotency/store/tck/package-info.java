/**
 * The store TCK: abstract JUnit 5 classes that a store's test extends, layered by capability from
 * {@link dev.idempotency.store.tck.AbstractStoreClaimTest} to
 * {@link dev.idempotency.store.tck.AbstractStoreTransactionTest}, with a
 * {@link dev.idempotency.store.tck.MutableClock} that moves on command and a many-thread fuzz through
 * {@link dev.idempotency.IdempotentExecutor}.
 */
@NullMarked
package dev.idempotency.store.tck;

import org.jspecify.annotations.NullMarked;
