package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import java.lang.reflect.Method;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.util.ClassUtils;

/**
 * Applies {@link Idempotent} to Spring beans: evaluates the key, then lets {@link IdempotentExecutor} claim it, run the
 * method or replay its recorded result. {@code @EnableIdempotency} registers it; it works on JDK interface proxies
 * and CGLIB class proxies alike. It applies to the method that runs when that method, or a method it implements or
 * overrides (an interface's, a superclass's), is annotated: an implementation that does not repeat the annotation is
 * protected all the same, as {@code @Transactional} is. The annotation nearest the running method wins, and the
 * default operation name is that of the method that carries it ({@code PaymentGateway.charge}), as in the processor's
 * {@code operations.json}. ({@link #POINTCUT})
 *
 * <p><b>Ordering.</b> The aspect has {@link Ordered#LOWEST_PRECEDENCE} by default, so that it runs <em>inside</em> a
 * {@code @Transactional} on the same method: the claim of the key is written in that transaction and commits or
 * rolls back with the method's own writes. (With equal orders, Spring applies advisors in the order their beans are
 * defined; {@code @EnableIdempotency} defines the aspect's advisor after every configuration class, so after the
 * transaction advisor.) Retry advice belongs outside both. When the executor's store has a pre-filter, a second
 * advisor applies the pre-filter's part ({@link #replayHeldOrProceed}) to {@code @Transactional} methods just outside
 * the transaction advisor: a duplicate the pre-filter holds is answered before a transaction begins.
 *
 * <p>The rules of a call live in {@link IdempotentAspectSupport}, which the AspectJ aspect of {@code idempotency-aspectj}
 * shares: this class only adapts a proxy's {@link MethodInvocation} to it. When a class is woven by that aspect as well
 * as proxied, a call through the proxy is guarded once, here.
 *
 * <p>It is a {@link MethodInterceptor}, applied by an advisor on {@link #POINTCUT}: {@code @EnableIdempotency} (and
 * the Boot auto-configuration) define one for every bean of this type.
 *
 * <p>Per method, everything is worked out once and cached: the {@link dev.idempotency.IdempotentOperation}, the parsed key
 * expression, the compensation method, whether its {@code @Transactional} needs a transaction. The startup check of
 * {@code @EnableIdempotency} does it for every bean's methods when the context starts, so that the first call pays
 * nothing; otherwise the first call does. A misconfigured annotation (a bad {@code ttl}, a missing {@code compensate}
 * method, a key expression that does not parse) fails that first call with a message naming the method (and is
 * logged as a warning at startup), and the method does not run.
 *
 * <p>A method whose {@code @Transactional} (Spring's or {@code jakarta.transaction}'s) asks for a transaction
 * ({@code REQUIRED}, {@code REQUIRES_NEW}, {@code MANDATORY}, {@code NESTED}) and reaches this advice with none
 * active fails with an {@link IllegalStateException} naming the method and the missing transaction advice, before
 * the key is claimed and before the method runs.
 */
public class IdempotentAspect extends IdempotentAspectSupport implements MethodInterceptor, Ordered {

    /**
     * Where the advice applies: methods annotated {@link Idempotent}, or overriding or implementing one that is
     * (Java does not inherit method annotations, this pointcut looks for them in the type hierarchy), except
     * {@link Tier#READ_ONLY} ones: those are not advised at all, so they cost exactly what a plain call costs.
     */
    public static final Pointcut POINTCUT = new StaticMethodMatcherPointcut() {
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            MergedAnnotation<Idempotent> found = idempotent(AopUtils.getMostSpecificMethod(method, targetClass));
            return found.isPresent() && found.getEnum("tier", Tier.class) != Tier.READ_ONLY;
        }
    };

    private int order = Ordered.LOWEST_PRECEDENCE;

    /** An aspect with the restricted {@link KeyResolver#create() KeyResolver}. */
    public IdempotentAspect(IdempotentExecutor executor) {
        this(executor, KeyResolver.create());
    }

    /** An aspect whose key expressions are evaluated by {@code keys}. */
    public IdempotentAspect(IdempotentExecutor executor, KeyResolver keys) {
        super(executor, keys);
    }

    /**
     * The advice placed just outside the transaction advisor of a {@code @Transactional} method (its own advisor,
     * when the executor's store has a pre-filter): answers a duplicate the pre-filter holds before the transaction
     * begins, or proceeds ({@link #replayHeldOrProceed}).
     */
    private final MethodInterceptor beforeTransaction = invocation -> holdsOutcomesInMemory()
            ? replayHeldOrProceed(invocation.getMethod(), targetClass(invocation), invocation.getArguments(),
                    invocation::proceed)
            : invocation.proceed();

    /** The advice: runs the annotated method at most once per key. */
    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object proxy = invocation instanceof ProxyMethodInvocation pmi ? pmi.getProxy() : null;
        return invokeIdempotent(invocation.getMethod(), targetClass(invocation), invocation.getThis(), proxy,
                invocation.getArguments(), invocation::proceed);
    }

    /** The advice that runs just outside the transaction advisor: see {@link #replayHeldOrProceed}. */
    MethodInterceptor beforeTransaction() {
        return beforeTransaction;
    }

    private static Class<?> targetClass(MethodInvocation invocation) {
        Object target = invocation.getThis();
        return ClassUtils.getUserClass(target != null ? AopUtils.getTargetClass(target)
                : invocation.getMethod().getDeclaringClass());
    }

    @Override
    public int getOrder() {
        return order;
    }

    /**
     * Where the advice sits among other advice: a lower value runs further outside. Keep it higher than (or equal
     * to) the transaction advisor's order, so that it runs inside the method's transaction.
     */
    public void setOrder(int order) {
        this.order = order;
    }

    @Override
    public String toString() {
        return "IdempotentAspect[order=" + order + ", " + keyResolver() + "]";
    }
}
