package dev.idempotency.spring;

/**
 * Adjusts the {@link IdempotentAspect} that {@link EnableIdempotency} (or the Boot auto-configuration) registers,
 * before its first call: every bean of this type is applied, in order. The auto-configuration contributes one that
 * applies {@code idempotency.default-ttl} and {@code idempotency.default-lock-timeout}.
 */
@FunctionalInterface
public interface IdempotentAspectCustomizer {

    void customize(IdempotentAspect aspect);
}
