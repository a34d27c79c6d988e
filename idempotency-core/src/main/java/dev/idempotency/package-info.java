/**
 * The public API: {@link dev.idempotency.Idempotent}, {@link dev.idempotency.Tier}, {@link dev.idempotency.IdempotentExecutor} (the engine, usable without Spring), the listener, scope, gate and context SPIs, and the exceptions, all of which extend {@link dev.idempotency.IdempotencyException}.
 */
@NullMarked
package dev.idempotency;

import org.jspecify.annotations.NullMarked;
