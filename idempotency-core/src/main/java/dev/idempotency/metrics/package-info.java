/**
 * Micrometer integration: {@link dev.idempotency.metrics.MicrometerIdempotencyListener} (meters) and
 * {@link dev.idempotency.metrics.MicrometerIdempotencyObserver} (an {@code Observation} around each call). Needs
 * Micrometer on the class path (an optional dependency).
 */
@NullMarked
package dev.idempotency.metrics;

import org.jspecify.annotations.NullMarked;
