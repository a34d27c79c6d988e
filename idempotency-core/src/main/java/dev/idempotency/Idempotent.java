package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a method idempotent: the first call with a key runs it and records its result; every later call with the
 * same key (and the same arguments) gets that result back without running it.
 *
 * <pre>{@code
 * @Idempotent(key = "'APPROVAL:' + #approvalNo + ':MAIN'", tier = Tier.REVERSIBLE, ttl = "24h")
 * @Transactional
 * public OrderReceipt createOrder(String approvalNo, OrderRequest request) { ... }
 * }</pre>
 *
 * <p>With Spring, {@code IdempotentAspect} applies it; it runs <em>inside</em> a {@code @Transactional} on the same
 * method, so that the claim of the key commits or rolls back with the method's own writes. Without Spring, use
 * {@link IdempotentExecutor} directly.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Idempotent {

    /**
     * A SpEL expression over the method's parameters that yields the business identity of this intent:
     * {@code #name}, {@code #p0}/{@code #a0}, {@code #root.args}. A null, empty or blank result is an
     * {@link IdempotencyKeyException}, and the method does not run. Make the key outside the retry loop (an order
     * number, a workflow id), never a fresh UUID per attempt. Not used by {@link Tier#READ_ONLY}.
     */
    String key() default "";

    /** The kind of side effect; required, there is no default. */
    Tier tier();

    /** How long a completed outcome is kept and replayed: {@code 30s}, {@code 15m}, {@code 24h}, {@code 7d} or ISO-8601 ({@code PT24H}). */
    String ttl() default "24h";

    /** The scope of the key; defaults to {@code SimpleClassName.method}. Set it to keep keys valid across a rename. */
    String operation() default "";

    /**
     * {@link Tier#REVERSIBLE} only: the name of a method on the same bean that undoes one call. It takes the same
     * parameters, optionally followed by the result, and runs when the method returned but the surrounding
     * transaction rolled back afterwards.
     */
    String compensate() default "";

    /** How long a duplicate waits for an attempt in flight before {@link IdempotencyInProgressException}. */
    String lockTimeout() default "10s";

    /**
     * How long a committed claim is protected without a sign of life before it counts as crashed (stale): same
     * syntax as {@link #ttl()}; empty means three lock timeouts. The lease is renewed while the method runs and until
     * the caller's transaction ends (every third of it), so it bounds how long a crash goes unnoticed, not how long
     * the method may run.
     */
    String lease() default "";

    /**
     * {@link Tier#IRREVERSIBLE} only: exceptions that mean "nothing happened" (the gateway refused before acting, a
     * validation failed). When the method throws one of these (or a subclass), the key is released and a retry runs
     * again. Any other exception from an irreversible method leaves its outcome unknown: the key is held
     * {@code NEEDS_REVIEW} until an operator resolves it, and every retry gets
     * {@link IdempotencyOutcomeUnknownException}. The annotation processor refuses the attribute on other tiers and
     * classes as broad as {@code Exception}, {@code RuntimeException}, {@code Error} or {@code Throwable}.
     */
    Class<? extends Throwable>[] releaseOn() default {};

    /**
     * Business exceptions to record as the outcome and throw again on every replay (opt-in; by default a thrown
     * exception records nothing and a retry runs the method again). When the method throws one of these classes or
     * a subclass, the most specific listed class and the message are recorded, and every replay throws a new
     * instance of that listed class, made through its public {@code (String message)} constructor. Each class must
     * be concrete, public, have that constructor, and be narrower than {@code Exception}, {@code RuntimeException}
     * or {@code Error}: record a decision ({@code InsufficientFundsException}), never a transient failure (a
     * timeout), which would then be replayed for the whole ttl.
     */
    Class<? extends Throwable>[] replayExceptions() default {};

    /**
     * What the call does when the store is unavailable (its key cannot be claimed or its outcome recorded because
     * the store failed or its circuit breaker is open): {@link StoreDown#FAIL} (the default) or, for a
     * {@link Tier#REVERSIBLE} method with a {@link #compensate()}, {@link StoreDown#PROCEED_UNGUARDED}. The
     * annotation processor refuses {@code PROCEED_UNGUARDED} on any other method.
     */
    StoreDown onStoreDown() default StoreDown.FAIL;
}
