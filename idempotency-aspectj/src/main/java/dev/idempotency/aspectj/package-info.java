/**
 * {@link dev.idempotency.Idempotent} woven by AspectJ: {@link dev.idempotency.aspectj.WovenIdempotentAspect}, for
 * self-invocations, non-public methods and applications without Spring (docs/aspectj.md).
 */
@NullMarked
package dev.idempotency.aspectj;

import org.jspecify.annotations.NullMarked;
