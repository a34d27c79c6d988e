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
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
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
 * What every way of applying {@link Idempotent} to a method shares, whether a Spring proxy applies it
 * ({@link IdempotentAspect}) or AspectJ weaves it ({@code dev.idempotency.aspectj.WovenIdempotentAspect}): reading the
 * annotation into an {@link IdempotentOperation} once per method, compiling its key expression, finding its
 * compensation, checking that a {@code @Transactional} method has its transaction, and handing the call to
 * {@link IdempotentExecutor}. A subclass only turns its join point into a method, a target and the arguments, and calls
 * {@link #invokeIdempotent}; none repeats a rule (as Spring's {@code TransactionAspectSupport} serves its proxy
 * interceptor and its AspectJ aspect alike).
 *
 * <p>It is public for the AspectJ module; applications use its subclasses.
 */
public abstract class IdempotentAspectSupport {

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

    /**
     * The target of the call the proxy advice is guarding, and its method, while that call runs: the woven advice of
     * the same execution then lets it through, so that a class both proxied and woven is guarded once per call.
     */
    private static final ThreadLocal<@Nullable GuardedCall> PROXY_GUARDED = new ThreadLocal<>();

    private volatile @Nullable IdempotentExecutor executor;
    private volatile KeyResolver keys = KeyResolver.create();
    private final ConcurrentMap<MethodClassKey, Descriptor> descriptors = new ConcurrentHashMap<>();
    private @Nullable Duration defaultTtl;
    private @Nullable Duration defaultLockTimeout;

    /** Advice with no executor yet: {@link #useExecutor} before the first call. */
    protected IdempotentAspectSupport() {
    }

    /** Advice whose calls run on {@code executor}, with keys evaluated by {@code keys}. */
    protected IdempotentAspectSupport(IdempotentExecutor executor, KeyResolver keys) {
        useExecutor(executor, keys);
    }

    /**
     * Sets the executor calls run on and the resolver of their keys; a later call replaces both (and forgets what was
     * worked out per method).
     */
    protected final synchronized void useExecutor(IdempotentExecutor executor, KeyResolver keys) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.keys = Objects.requireNonNull(keys, "keys");
        descriptors.clear();
    }

    /**
     * Forgets the executor, if it is {@code current} (any, if null): later calls fail as before
     * {@link #useExecutor}.
     */
    protected final synchronized void forgetExecutor(@Nullable IdempotentExecutor current) {
        if (current == null || executor == current) {
            executor = null;
            descriptors.clear();
        }
    }

    /** The resolver of the key expressions. */
    final KeyResolver keyResolver() {
        return keys;
    }

    /** Whether an executor is set. */
    protected final boolean hasExecutor() {
        return executor != null;
    }

    /** The method's body (and any advice inside this one), for {@link #invokeIdempotent}. */
    @FunctionalInterface
    protected interface Proceeding {
        @Nullable Object proceed() throws Throwable;
    }

    /**
     * Runs one call of an {@code @Idempotent} method at most once per key.
     *
     * @param invoked     the method called (an interface's, for a JDK proxy)
     * @param targetClass the class of the object it was called on (its user class, not a proxy's)
     * @param target      that object, or null for a static method
     * @param proxy       the proxy the call came through, or null: a compensation is called through it when it can,
     *                    so that its own advice ({@code @Transactional(REQUIRES_NEW)}) applies
     * @param args        the call's arguments
     * @param proceeding  runs the method
     * @return the method's result, or the recorded one
     */
    protected final @Nullable Object invokeIdempotent(Method invoked, Class<?> targetClass, @Nullable Object target,
            @Nullable Object proxy, Object[] args, Proceeding proceeding) throws Throwable {
        IdempotentExecutor ex = executor;
        if (ex == null) {
            throw new IllegalStateException(notConfigured(signature(invoked)));
        }
        Descriptor d = descriptor(ex, invoked, targetClass);
        if (d.operation.tier() == Tier.READ_ONLY) {
            return proceeding.proceed();
        }
        if (d.transactionMissing != null && !TransactionSynchronizationManager.isActualTransactionActive()) {
            // @Transactional says the claim and the method's writes commit together; without a transaction they
            // would not (the claim would commit on its own and a failed call leave its writes behind)
            throw new IllegalStateException(d.transactionMissing);
        }
        String key = d.key.resolve(args);
        IdempotentExecutor.Compensation<Object> compensation = d.compensation == null ? null
                : result -> d.compensation.invoke(proxy, target, args, result);
        IdempotentExecutor.Action<Object, Throwable> action = proxy == null ? proceeding::proceed
                : new GuardedCall(target, d.method, proceeding);
        return ex.execute(d.operation, key, args, action, compensation);
    }

    /** Whether the executor's store has a pre-filter that {@link #replayHeldOrProceed} can ask. */
    final boolean holdsOutcomesInMemory() {
        IdempotentExecutor ex = executor;
        return ex != null && ex.holdsOutcomesInMemory();
    }

    /**
     * Answers the call from the executor's pre-filter when it holds the key's completed outcome for these arguments
     * ({@link IdempotentExecutor#replayHeldOr}); otherwise proceeds to what is further in: the method's transaction,
     * then {@link #invokeIdempotent}, which decides the call as always. The proxy advice runs it just outside the
     * transaction advisor, so that a duplicate the pre-filter answers begins no transaction and borrows no
     * connection. Whatever fails here (the key expression, say) fails again further in, where it is reported: here
     * the call only proceeds. On a miss the key is evaluated twice, here and further in.
     */
    final @Nullable Object replayHeldOrProceed(Method invoked, Class<?> targetClass, Object[] args,
            Proceeding proceeding) throws Throwable {
        IdempotentExecutor ex = executor;
        Descriptor d = null;
        String key = null;
        if (ex != null) {
            // (its callers asked holdsOutcomesInMemory(); without a pre-filter replayHeldOr only proceeds)
            try {
                d = descriptor(ex, invoked, targetClass);
                key = d.key == null ? null : d.key.resolve(args);
            } catch (RuntimeException e) {
                key = null;
            }
        }
        if (key == null) {
            return proceeding.proceed();
        }
        return ex.replayHeldOr(d.operation, key, args, proceeding::proceed);
    }

    /**
     * Whether the execution of {@code method} on {@code target} is the very call the proxy advice is guarding (the
     * class is woven as well as proxied): then the woven advice must let it through. Forgets it, so that a call the
     * method makes on its own object is guarded again.
     */
    protected static boolean guardedByProxy(@Nullable Object target, Method method) {
        GuardedCall guarded = PROXY_GUARDED.get();
        if (guarded != null && guarded.target == target && guarded.method.equals(method)) {
            PROXY_GUARDED.remove();
            return true;
        }
        return false;
    }

    /** What a call made before {@link #useExecutor} says; the method did not run. */
    protected String notConfigured(String signature) {
        return "@Idempotent " + signature + " was called before " + getClass().getSimpleName() + " had an executor;"
                + " the method did not run";
    }

    private Descriptor descriptor(IdempotentExecutor ex, Method invoked, Class<?> targetClass) {
        MethodClassKey cacheKey = new MethodClassKey(invoked, targetClass);
        Descriptor d = descriptors.get(cacheKey);
        if (d == null) {
            // built outside the map's lock: a failure is not cached, and a race builds it twice, harmlessly
            d = describe(ex, invoked, targetClass);
            Descriptor raced = descriptors.putIfAbsent(cacheKey, d);
            if (raced != null) {
                d = raced;
            }
        }
        return d;
    }

    private Descriptor describe(IdempotentExecutor ex, Method invoked, Class<?> targetClass) {
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
            return new Descriptor(operation, method, null, null, null);
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
            if (Modifier.isStatic(method.getModifiers())) {
                throw new IllegalStateException(signature + ": compensate = \"" + ann.compensate()
                        + "\" needs an instance to call it on, and the method is static");
            }
            compensation = Compensator.find(targetClass, method, ann.compensate().trim(), signature);
        }
        ex.prepare(operation);
        return new Descriptor(operation, method, key, compensation, transactionMissing(method, targetClass));
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
        IdempotentExecutor ex = executor;
        if (ex != null) {
            descriptor(ex, invoked, ClassUtils.getUserClass(targetClass));
        }
    }

    /**
     * Whether a call of {@code method} may be answered before its transaction advice runs: not when that advice is
     * there to refuse a call made without a transaction ({@code MANDATORY}) or within one ({@code NEVER}), which a
     * replay must not skip.
     */
    static boolean answerableBeforeTransaction(Method method, Class<?> targetClass) {
        TransactionAttribute attribute = TRANSACTIONS.getTransactionAttribute(method, targetClass);
        return attribute == null
                || (attribute.getPropagationBehavior() != TransactionDefinition.PROPAGATION_MANDATORY
                        && attribute.getPropagationBehavior() != TransactionDefinition.PROPAGATION_NEVER);
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
                + " DataSource), and keep the transaction advisor's order lower than the idempotency aspect's (with"
                + " AspectJ weaving, weave Spring's transaction aspect too: @EnableTransactionManagement(mode ="
                + " ASPECTJ) with spring-aspects, or keep the transaction a proxy's)";
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

    private Duration requirePositive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(getClass().getSimpleName() + "." + what + " must be positive, was " + d);
        }
        return d;
    }

    /**
     * The call the proxy advice is guarding: the target (compared by identity) and its method; as the executor's
     * action, it runs the method with itself in {@link #PROXY_GUARDED}.
     */
    private record GuardedCall(@Nullable Object target, Method method, Proceeding proceeding)
            implements IdempotentExecutor.Action<Object, Throwable> {

        @Override
        public @Nullable Object run() throws Throwable {
            GuardedCall outer = PROXY_GUARDED.get();
            PROXY_GUARDED.set(this);
            try {
                return proceeding.proceed();
            } finally {
                PROXY_GUARDED.set(outer);
            }
        }
    }

    /** What one method needs at every call, worked out once. */
    private record Descriptor(IdempotentOperation<Object> operation, Method method, KeyResolver.@Nullable Key key,
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
                        : "found only " + named.stream().map(IdempotentAspectSupport::signature)
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

