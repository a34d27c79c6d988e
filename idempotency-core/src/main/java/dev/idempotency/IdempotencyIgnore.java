package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Leaves a parameter of an {@link Idempotent} method out of the payload fingerprint: a trace id, a timestamp, a
 * confirmation token. Two calls that differ only in such parameters count as the same request.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface IdempotencyIgnore {
}
