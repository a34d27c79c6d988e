/**
 * The store SPI ({@link dev.idempotency.store.IdempotencyStore}) with its request, result and record types, and the in-memory store. Implement the SPI for a new database and prove it with {@code idempotency-store-tck}.
 */
@NullMarked
package dev.idempotency.store;

import org.jspecify.annotations.NullMarked;
