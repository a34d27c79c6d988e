package dev.idempotency.aspectj;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.spring.IdempotentAspectSupport;
import dev.idempotency.spring.KeyResolver;
import java.lang.reflect.Method;
import org.aspectj.lang.Aspects;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.DeclarePrecedence;
import org.aspectj.lang.annotation.Pointcut;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;

/**
 * Applies {@link dev.idempotency.Idempotent} where AspectJ weaves it: at every execution of a method annotated
 * {@code @Idempotent} (any visibility, static or not, however it is called: through {@code this}, from another
 * object, from a constructor), except {@code READ_ONLY} ones, which are not woven at all. Each call runs through the
 * same {@link IdempotentAspectSupport} as the Spring proxy's {@code IdempotentAspect}: the same SpEL key, the same
 * {@link IdempotentExecutor}, the same tier rules, compensation and listeners.
 *
 * <p>One instance per class loader (an AspectJ singleton aspect), created by the weaver. Give it its executor once, at
 * startup, before the first call:
 *
 * <pre>{@code
 * IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
 * WovenIdempotentAspect.configure(executor);
 * }</pre>
 *
 * In a Spring application, {@code @EnableIdempotency(mode = AdviceMode.ASPECTJ)} does it with the context's executor
 * and {@code KeyResolver}. A call before that fails with an {@link IllegalStateException} naming the method, and the
 * method does not run.
 *
 * <p><b>Ordering.</b> The annotation must be on the method that runs (on the class's own method, not only on an
 * interface it implements: AspectJ matches the executing method, as it does for Spring's woven
 * {@code @Transactional}). Around Spring's woven transaction aspect ({@code AnnotationTransactionAspect},
 * {@code @EnableTransactionManagement(mode = ASPECTJ)}) this aspect runs inside, so that the claim of the key is
 * written in the method's transaction; a proxied {@code @Transactional} is always outside woven advice.
 *
 * <p>A class both woven and proxied by {@code @EnableIdempotency}'s default proxy mode is guarded once per call: the
 * woven advice lets through the execution the proxy advice is already guarding.
 */
@Aspect
@DeclarePrecedence("org.springframework.transaction.aspectj.*, dev.idempotency.aspectj.WovenIdempotentAspect")
public class WovenIdempotentAspect extends IdempotentAspectSupport {

    /** Created by the weaver; use {@link #instance()}. */
    public WovenIdempotentAspect() {
    }

    /**
     * The executions of methods annotated {@code @Idempotent} with a writing tier (a {@code READ_ONLY} one costs what a
     * plain call costs: it is not woven).
     */
    @Pointcut("execution(@dev.idempotency.Idempotent * *(..))"
            + " && !execution(@dev.idempotency.Idempotent(tier = dev.idempotency.Tier.READ_ONLY) * *(..))")
    void idempotentExecution() {
    }

    /** The advice: runs the method at most once per key. */
    @Around("idempotentExecution()")
    public @Nullable Object guard(ProceedingJoinPoint call) throws Throwable {
        Method method = ((MethodSignature) call.getSignature()).getMethod();
        Object target = call.getThis();
        if (guardedByProxy(target, method)) {
            return call.proceed();
        }
        Class<?> targetClass = target != null ? target.getClass() : method.getDeclaringClass();
        return invokeIdempotent(method, targetClass, target, null, call.getArgs(), call::proceed);
    }

    /**
     * The aspect instance of this class loader (what the {@code aspectOf()} method ajc adds returns; javac cannot see
     * that one in this module's own sources).
     */
    public static WovenIdempotentAspect instance() {
        return Aspects.aspectOf(WovenIdempotentAspect.class);
    }

    /**
     * Gives the woven advice its executor, with the restricted {@link KeyResolver#create() KeyResolver}: call it once,
     * at startup, before the first call of an {@code @Idempotent} method. Calling it again replaces the executor.
     */
    public static WovenIdempotentAspect configure(IdempotentExecutor executor) {
        return configure(executor, KeyResolver.create());
    }

    /** Like {@link #configure(IdempotentExecutor)}, with key expressions evaluated by {@code keys}. */
    public static WovenIdempotentAspect configure(IdempotentExecutor executor, KeyResolver keys) {
        WovenIdempotentAspect aspect = instance();
        aspect.useExecutor(executor, keys);
        return aspect;
    }

    /** Whether {@link #configure} has been called (and not undone by {@link #reset()}). */
    public static boolean isConfigured() {
        return instance().hasExecutor();
    }

    /**
     * Forgets the executor: later calls fail as before {@link #configure}. A Spring context that configured the aspect
     * calls it when it closes, so that no call reaches the store of a closed context.
     */
    public static void reset() {
        instance().forgetExecutor(null);
    }

    /** Forgets {@code executor} if it is still the one in use (a later configuration stays). */
    void release(IdempotentExecutor executor) {
        forgetExecutor(executor);
    }

    @Override
    protected String notConfigured(String signature) {
        return "@Idempotent " + signature + " was called before the AspectJ aspect had an executor, so it was not"
                + " guarded and did not run: call WovenIdempotentAspect.configure(executor) once at startup, before"
                + " the first call (in Spring, @EnableIdempotency(mode = AdviceMode.ASPECTJ) does it)";
    }

    @Override
    public String toString() {
        return "WovenIdempotentAspect[" + (hasExecutor() ? "configured" : "not configured") + "]";
    }
}
