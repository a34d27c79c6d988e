/**
 * {@link dev.idempotency.cache.CaffeinePrefilter}: answers committed outcomes of this node from memory, in front of
 * any {@link dev.idempotency.store.IdempotencyStore}. Needs Caffeine on the class path (an optional dependency).
 */
@NullMarked
package dev.idempotency.cache;

import org.jspecify.annotations.NullMarked;
