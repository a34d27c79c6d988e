package dev.idempotency.spring;

/**
 * Adjusts the advice that {@link EnableIdempotency} (or the Boot auto-configuration) registers (the
 * {@link IdempotentAspect}, or in {@code AdviceMode.ASPECTJ} the woven aspect; both are an
 * {@link IdempotentAspectSupport}),
 * before its first call: every bean of this type is applied, in order. The auto-configuration contributes one that
 * applies {@code idempotency.default-ttl} and {@code idempotency.default-lock-timeout}.
 */
@FunctionalInterface
public interface IdempotentAspectCustomizer {

    void customize(IdempotentAspectSupport aspect);
}
