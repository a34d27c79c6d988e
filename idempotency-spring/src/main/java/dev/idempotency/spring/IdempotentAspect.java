package dev.idempotency.spring;

import dev.idempotency.IdempotencyIgnore;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.internal.Durations;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.stream.Collectors;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

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
 * transaction advisor.) Retry advice belongs outside both.
 *
 * <p>It is a {@link MethodInterceptor}, applied by an advisor on {@link #POINTCUT}: {@code @EnableIdempotency} (and
 * the Boot auto-configuration) define one for every bean of this type.
 *
 * <p>Per method, everything is worked out once and cached: the {@link IdempotentOperation}, the parsed key
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
public class IdempotentAspect implements MethodInterceptor, Ordered {

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

    /** The {@code @Idempotent} of a method, on it or on the method it overrides or implements. */
    static MergedAnnotation<Idempotent> idempotent(Method method) {
        return MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).get(Idempotent.class);
    }

    /** Where {@code @Transactional} (Spring's, or {@code jakarta.transaction}'s) is read, on any method. */
    private static final AnnotationTransactionAttributeSource TRANSACTIONS =
            new AnnotationTransactionAttributeSource(false);
    private static final Set<Integer> NEEDS_TRANSACTION = Set.of(TransactionDefinition.PROPAGATION_REQUIRED,
            TransactionDefinition.PROPAGATION_REQUIRES_NEW, TransactionDefinition.PROPAGATION_MANDATORY,
            TransactionDefinition.PROPAGATION_NESTED);

    private static final String DEFAULT_TTL = defaultOf("ttl");
    private static final String DEFAULT_LOCK_TIMEOUT = defaultOf("lockTimeout");

    private final IdempotentExecutor executor;
    private final KeyResolver keys;
    private final ConcurrentMap<MethodClassKey, Descriptor> descriptors = new ConcurrentHashMap<>();
    private int order = Ordered.LOWEST_PRECEDENCE;
    private @Nullable Duration defaultTtl;
    private @Nullable Duration defaultLockTimeout;

    /** An aspect with the restricted {@link KeyResolver#create() KeyResolver}. */
    public IdempotentAspect(IdempotentExecutor executor) {
        this(executor, KeyResolver.create());
    }

    /** An aspect whose key expressions are evaluated by {@code keys}. */
    public IdempotentAspect(IdempotentExecutor executor, KeyResolver keys) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /** The advice: runs the annotated method at most once per key. */
    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Method invoked = invocation.getMethod();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : invoked.getDeclaringClass();
        Descriptor d = descriptor(invoked, ClassUtils.getUserClass(targetClass));
        if (d.operation.tier() == Tier.READ_ONLY) {
            return invocation.proceed();
        }
        if (d.transactionMissing != null && !TransactionSynchronizationManager.isActualTransactionActive()) {
            // @Transactional says the claim and the method's writes commit together; without a transaction they
            // would not (the claim would commit on its own and a failed call leave its writes behind)
            throw new IllegalStateException(d.transactionMissing);
        }
        Object[] args = invocation.getArguments();
        String key = d.key.resolve(args);
        Object proxy = invocation instanceof ProxyMethodInvocation pmi ? pmi.getProxy() : null;
        IdempotentExecutor.Compensation<Object> compensation = d.compensation == null ? null
                : result -> d.compensation.invoke(proxy, target, args, result);
        return executor.execute(d.operation, key, args, invocation::proceed, compensation);
    }

    private Descriptor descriptor(Method invoked, Class<?> targetClass) {
        MethodClassKey cacheKey = new MethodClassKey(invoked, targetClass);
        Descriptor d = descriptors.get(cacheKey);
        if (d == null) {
            // built outside the map's lock: a failure is not cached, and a race builds it twice, harmlessly
            d = describe(invoked, targetClass);
            Descriptor raced = descriptors.putIfAbsent(cacheKey, d);
            if (raced != null) {
                d = raced;
            }
        }
        return d;
    }

    private Descriptor describe(Method invoked, Class<?> targetClass) {
        Method method = AopUtils.getMostSpecificMethod(invoked, targetClass);
        // as the pointcut matches: on this method, or inherited from the method it overrides or implements
        MergedAnnotation<Idempotent> found = idempotent(method);
        if (!found.isPresent() || !(found.getSource() instanceof Method annotated)) {
            throw new IllegalStateException("no @Idempotent on " + signature(method));
        }
        Idempotent ann = found.synthesize();
        String signature = signature(method);
        String description = ann.tier() == Tier.READ_ONLY ? signature
                : signature + " key \"" + ann.key() + "\"";
        String name = operationName(annotated, ann);
        IdempotentOperation<Object> operation = IdempotentOperation
                .builder(name, ann.tier(), ResultType.ofType(method.getGenericReturnType()))
                .ttl(defaultTtl != null && ann.ttl().equals(DEFAULT_TTL) ? defaultTtl
                        : Durations.parse(ann.ttl(), "ttl of " + signature))
                .lockTimeout(defaultLockTimeout != null && ann.lockTimeout().equals(DEFAULT_LOCK_TIMEOUT)
                        ? defaultLockTimeout : Durations.parse(ann.lockTimeout(), "lockTimeout of " + signature))
                .lease(ann.lease())
                .ignoredArguments(ignored(method, invoked, annotated))
                .replayExceptions(ann.replayExceptions())
                .releaseOn(ann.releaseOn())
                .onStoreDown(ann.onStoreDown())
                .compensated(!ann.compensate().isBlank())
                .description(description)
                .build();
        if (ann.tier() == Tier.READ_ONLY) {
            return new Descriptor(operation, null, null, null);
        }
        // the key names the parameters of the method that carries it (an implementation may rename them), as the
        // processor checked it
        KeyResolver.Key key = keys.compile(annotated, ann.key(), description);
        Compensator compensation = null;
        if (!ann.compensate().isBlank()) {
            if (ann.tier() != Tier.REVERSIBLE) {
                throw new IllegalStateException(signature + ": compensate = \"" + ann.compensate()
                        + "\" needs tier = REVERSIBLE, the tier is " + ann.tier());
            }
            compensation = Compensator.find(targetClass, method, ann.compensate().trim(), signature);
        }
        executor.prepare(operation);
        return new Descriptor(operation, key, compensation, transactionMissing(method, targetClass));
    }

    /**
     * The name of the operation {@code annotated} (the method that carries the annotation) declares: its
     * {@code operation}, or {@code SimpleClassName.method} of that method, as the processor names it.
     */
    static String operationName(Method annotated, Idempotent ann) {
        return ann.operation().isBlank()
                ? annotated.getDeclaringClass().getSimpleName() + "." + annotated.getName()
                : ann.operation().trim();
    }

    /**
     * Works out, ahead of the first call, everything the advice needs for {@code invoked} on a bean of
     * {@code targetClass} (the startup check calls it for every {@code @Idempotent} method it finds).
     *
     * @throws RuntimeException what the first call would throw: a bad ttl, key expression or compensation
     */
    void prepare(Method invoked, Class<?> targetClass) {
        descriptor(invoked, ClassUtils.getUserClass(targetClass));
    }

    /**
     * What a call of {@code method} says when it needs a transaction (its {@code @Transactional}, Spring's or
     * {@code jakarta.transaction}'s, asks for one) and finds none; null when it needs none.
     */
    static @Nullable String transactionMissing(Method method, Class<?> targetClass) {
        TransactionAttribute attribute = TRANSACTIONS.getTransactionAttribute(method, targetClass);
        if (attribute == null || !NEEDS_TRANSACTION.contains(attribute.getPropagationBehavior())) {
            return null;
        }
        return signature(method) + " is @Transactional but no transaction is active when @Idempotent runs, so the"
                + " claim of its key would commit on its own, apart from the method's writes; the method did not"
                + " run. No transaction advice reached this call: declare a transaction manager bean (a"
                + " PlatformTransactionManager) and @EnableTransactionManagement (Spring Boot does both for a"
                + " DataSource), and keep the transaction advisor's order lower than the idempotency aspect's";
    }

    private static int[] ignored(Method method, Method invoked, Method annotated) {
        Parameter[] specific = method.getParameters();
        Parameter[] declared = invoked.getParameters();
        Parameter[] inherited = annotated.getParameters();
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < specific.length; i++) {
            if (specific[i].isAnnotationPresent(IdempotencyIgnore.class)
                    || (i < declared.length && declared[i].isAnnotationPresent(IdempotencyIgnore.class))
                    || (i < inherited.length && inherited[i].isAnnotationPresent(IdempotencyIgnore.class))) {
                positions.add(i);
            }
        }
        return positions.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String defaultOf(String element) {
        try {
            return (String) Idempotent.class.getMethod(element).getDefaultValue();
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code OrderService.createOrder(String, OrderRequest)}. */
    static String signature(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
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

    /**
     * The ttl of methods whose {@code @Idempotent} leaves {@code ttl} at its default ({@code "24h"}); a method that
     * sets it (to anything else) keeps its own. Set before the first call; the Boot property
     * {@code idempotency.default-ttl} sets it.
     */
    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = requirePositive(defaultTtl, "defaultTtl");
    }

    /**
     * The lock timeout of methods whose {@code @Idempotent} leaves {@code lockTimeout} at its default
     * ({@code "10s"}); a method that sets it keeps its own. Set before the first call; the Boot property
     * {@code idempotency.default-lock-timeout} sets it.
     */
    public void setDefaultLockTimeout(Duration defaultLockTimeout) {
        this.defaultLockTimeout = requirePositive(defaultLockTimeout, "defaultLockTimeout");
    }

    private static Duration requirePositive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("IdempotentAspect." + what + " must be positive, was " + d);
        }
        return d;
    }

    @Override
    public String toString() {
        return "IdempotentAspect[order=" + order + ", " + keys + "]";
    }

    /** What one method needs at every call, worked out once. */
    private record Descriptor(IdempotentOperation<Object> operation, KeyResolver.@Nullable Key key,
            @Nullable Compensator compensation, @Nullable String transactionMissing) {
    }

    /** The {@code compensate} method of one idempotent method, and how to call it. */
    private record Compensator(Method method, boolean withResult) {

        static Compensator find(Class<?> targetClass, Method idempotent, String name, String signature) {
            Class<?>[] params = idempotent.getParameterTypes();
            Class<?> resultType = idempotent.getReturnType();
            Method plain = null;
            Method withResult = null;
            List<Method> named = new ArrayList<>();
            for (Method m : ReflectionUtils.getUniqueDeclaredMethods(targetClass, m -> m.getName().equals(name))) {
                named.add(m);
                Class<?>[] p = m.getParameterTypes();
                if (Modifier.isStatic(m.getModifiers())) {
                    continue;
                }
                if (Arrays.equals(p, params)) {
                    plain = m;
                } else if (p.length == params.length + 1 && resultType != void.class
                        && Arrays.equals(Arrays.copyOf(p, params.length), params)
                        && ClassUtils.isAssignable(p[params.length], resultType)) {
                    withResult = m;
                }
            }
            Method found = withResult != null ? withResult : plain;
            if (found == null) {
                String wanted = Arrays.stream(params).map(Class::getSimpleName).collect(Collectors.joining(", "));
                String expected = name + "(" + wanted + ")" + (resultType == void.class ? ""
                        : " or " + name + "(" + wanted + (wanted.isEmpty() ? "" : ", ")
                                + resultType.getSimpleName() + ")");
                String seen = named.isEmpty() ? "there is no method of that name"
                        : "found only " + named.stream().map(IdempotentAspect::signature)
                                .collect(Collectors.joining(", "));
                throw new IllegalStateException(signature + ": compensate = \"" + name + "\" needs an instance method "
                        + expected + " on " + targetClass.getSimpleName() + "; " + seen);
            }
            ReflectionUtils.makeAccessible(found);
            return new Compensator(found, withResult != null);
        }

        /**
         * Calls the compensation through the proxy when it can (so that its own {@code @Transactional}, say
         * {@code REQUIRES_NEW}, applies), otherwise on the target.
         */
        void invoke(Object proxy, Object target, Object[] args, @Nullable Object result) throws Exception {
            Object[] callArgs = args;
            if (withResult) {
                callArgs = Arrays.copyOf(args, args.length + 1);
                callArgs[args.length] = result;
            }
            Object receiver = target;
            Method m = method;
            int mod = method.getModifiers();
            if (proxy != null && !Modifier.isPrivate(mod) && !Modifier.isFinal(mod)) {
                if (method.getDeclaringClass().isInstance(proxy)) {
                    receiver = proxy;
                } else {
                    Method iface = ClassUtils.getInterfaceMethodIfPossible(method, target.getClass());
                    if (iface.getDeclaringClass().isInstance(proxy)) {
                        receiver = proxy;
                        m = iface;
                    }
                }
            }
            try {
                m.invoke(receiver, callArgs);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception ex) {
                    throw ex;
                }
                if (cause instanceof Error error) {
                    throw error;
                }
                throw e;
            }
        }
    }
}
