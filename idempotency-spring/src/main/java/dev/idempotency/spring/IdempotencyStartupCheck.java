package dev.idempotency.spring;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.Tier;
import dev.idempotency.internal.ProxyReach;
import dev.idempotency.store.IdempotencyStore;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.scope.ScopedObject;
import org.springframework.aop.scope.ScopedProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks, when every singleton is created, what would otherwise fail silently or at the first call, over every
 * bean's {@code @Idempotent} methods ({@code READ_ONLY} ones are never advised and are left out):
 * <ul>
 *   <li>a method a proxy cannot intercept (private, static, final or on a final class under a class proxy, absent
 *       from the interfaces of an interface proxy, or on a bean the idempotency advisor did not proxy) fails the
 *       context with the annotation processor's own sentence; a class woven by AspectJ is left to the weaver;</li>
 *   <li>a method whose {@code @Transactional} needs a transaction fails the context when no transaction advice exists,
 *       or none applies to its bean;</li>
 *   <li>two distinct annotated methods with one operation name fail the context, naming both (an interface method
 *       implemented by several beans is one operation, and no clash);</li>
 *   <li>each JDBC store checks its table ({@code JdbcIdempotencyStore.verifySchema()});</li>
 *   <li>each method's descriptor is built now, through {@link IdempotentAspect#prepare}, so that the first call pays
 *       nothing; one that cannot be built (a {@code ttl} or {@code lockTimeout} that does not parse, a key expression
 *       that does not compile, a compensation that is missing or does not fit, a result type the codec refuses) fails
 *       the context, naming the method and the cause;</li>
 *   <li>a call of an {@code @Idempotent} method from another method of its own class, found in the byte code, is
 *       logged as a warning ({@link SelfInvocations});</li>
 * </ul>
 * and then logs, at INFO, one line of what was wired (the operations of other ways in, such as idempotency-web's, are
 * counted through {@link GuardedOperations}). Registered with the aspect's advisor
 * ({@link IdempotentAdvisor#registerFor}), by {@code @EnableIdempotency} and the Spring Boot auto-configuration alike.
 */
final class IdempotencyStartupCheck implements SmartInitializingSingleton, BeanFactoryAware {

    static final String BEAN_NAME = "idempotencyStartupCheck";

    /** The Boot auto-configuration's bean that describes the store the executor uses (pre-filter included). */
    static final String STORE_FRONT_BEAN_NAME = "idempotencyStoreFront";

    private static final Log LOG = LogFactory.getLog(IdempotencyStartupCheck.class);
    private static final String JDBC_STORE = "dev.idempotency.jdbc.JdbcIdempotencyStore";
    private static final String ASPECTJ_TRANSACTIONS = "org.springframework.transaction.config.internalTransactionAspect";
    private static final String WEAVING_FIX = "; or weave it with AspectJ";

    private @Nullable ConfigurableListableBeanFactory beanFactory;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        if (beanFactory instanceof ConfigurableListableBeanFactory factory) {
            this.beanFactory = factory;
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        ConfigurableListableBeanFactory bf = beanFactory;
        if (bf == null) {
            return;
        }
        Map<String, IdempotentAspectSupport> aspects = bf.getBeansOfType(IdempotentAspectSupport.class, false, false);
        if (aspects.isEmpty()) {
            return;
        }
        // AdviceMode.ASPECTJ: the woven aspect is the only advice, and a class the weaver missed is not guarded at all
        boolean wovenOnly = aspects.values().stream().noneMatch(IdempotentAspect.class::isInstance);
        List<String> errors = new ArrayList<>();
        if (!wovenOnly && aspects.values().stream().anyMatch(a -> !(a instanceof IdempotentAspect))) {
            errors.add("@EnableIdempotency is declared in both modes, PROXY and ASPECTJ (aspects " + aspects.keySet()
                    + "): a method would be advised twice; keep one @EnableIdempotency, with mode = ASPECTJ where"
                    + " classes are woven");
        }
        Map<String, Site> operations = new TreeMap<>();
        boolean transactionAdvice = bf.getBeanNamesForType(TransactionAspectSupport.class, true, false).length > 0;
        boolean aspectjTransactions = bf.containsBean(ASPECTJ_TRANSACTIONS);
        int woven = 0;
        for (String name : bf.getBeanNamesForType(Object.class, true, false)) {
            if (ScopedProxyUtils.isScopedTarget(name)) {
                continue;
            }
            Object bean = instance(bf, name);
            Class<?> type = bean != null ? AopUtils.getTargetClass(bean) : bf.getType(name, false);
            if (type == null || bean instanceof ScopedObject) {
                continue;
            }
            Class<?> userClass = ClassUtils.getUserClass(type);
            // Spring's own infrastructure carries no @Idempotent: skipping it keeps the scan short in a Boot context
            if (userClass.getName().startsWith("org.springframework.")
                    || !AnnotationUtils.isCandidateClass(userClass, Idempotent.class)) {
                continue;
            }
            List<Method> methods = idempotentMethods(userClass);
            if (methods.isEmpty()) {
                continue;
            }
            boolean isWoven = woven(userClass);
            woven += isWoven ? 1 : 0;
            List<Method> reachable = new ArrayList<>();
            for (Method method : methods) {
                MergedAnnotation<Idempotent> found = IdempotentAspect.idempotent(method);
                Method annotated = (Method) Objects.requireNonNull(found.getSource());
                String where = method.getDeclaringClass().getSimpleName() + "." + method.getName();
                String operation = IdempotentAspect.operationName(annotated, found.synthesize());
                Site site = new Site(annotated, method);
                Site other = operations.putIfAbsent(operation, site);
                if (other != null && !other.annotated().equals(annotated)) {
                    errors.add("operation \"" + operation + "\" of " + site.display() + " is also the operation of "
                            + other.display() + ": their keys would share one key space and replay each other's"
                            + " results; give one of them its own name with operation = \"...\"");
                }
                if (!isWoven && wovenOnly) {
                    errors.add("@Idempotent on " + where + " is never applied: @EnableIdempotency(mode = ASPECTJ)"
                            + " applies it by AspectJ weaving only, and class " + userClass.getName() + " is not"
                            + " woven; weave it at compile time (aspectj-maven-plugin with idempotency-aspectj as an"
                            + " aspect library) or at load time (-javaagent:aspectjweaver.jar), see docs/aspectj.md;"
                            + " or use the default mode, PROXY");
                    continue;
                }
                if (!isWoven) {
                    String unreachable = unreachable(name, bean, userClass, method, where);
                    if (unreachable != null) {
                        errors.add(unreachable);
                        continue;
                    }
                }
                reachable.add(method);
                if (IdempotentAspect.transactionMissing(method, userClass) != null && aspectjTransactions
                        && !wovenOnly) {
                    errors.add(IdempotentAspect.signature(method) + " is @Transactional, and the transaction is woven"
                            + " (@EnableTransactionManagement(mode = ASPECTJ)) while @Idempotent is applied by a"
                            + " proxy: the proxy runs outside the woven transaction, so the claim of its key would not"
                            + " be written in it. Use @EnableIdempotency(mode = ASPECTJ) too (idempotency-aspectj), or"
                            + " proxy-based transactions");
                } else if (IdempotentAspect.transactionMissing(method, userClass) != null && !aspectjTransactions) {
                    if (!transactionAdvice) {
                        errors.add(IdempotentAspect.signature(method) + " is @Transactional, but the application "
                                + "context has no transaction advice, so @Transactional does nothing: the claim of "
                                + "its key would commit on its own and a call that fails would leave its writes "
                                + "behind. Declare a transaction manager bean (a PlatformTransactionManager) and "
                                + "@EnableTransactionManagement (Spring Boot does both for a DataSource, unless its "
                                + "transaction auto-configuration is excluded)");
                    } else if (bean instanceof Advised advised && !isWoven && !hasTransactionAdvice(advised)) {
                        errors.add(IdempotentAspect.signature(method) + " is @Transactional, but no transaction "
                                + "advice applies to bean '" + name + "': the claim of its key would commit on its "
                                + "own. Check that the transaction advisor (@EnableTransactionManagement) applies "
                                + "to this bean");
                    }
                }
                prepare(aspects, bean, userClass, method, errors);
            }
            if (!isWoven && !reachable.isEmpty()) {
                SelfInvocations.warn(userClass, reachable); // an unreachable method is an error already
            }
        }
        verifyStores(bf, errors);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("@Idempotent is misconfigured (" + errors.size() + " problem"
                    + (errors.size() == 1 ? "" : "s") + "):\n - " + String.join("\n - ", errors));
        }
        if (LOG.isInfoEnabled()) {
            LOG.info(wiring(bf, aspects, operations.size(), woven));
        }
    }

    /** The singleton already created under {@code name}, or null (never creates a bean, nor a factory's product). */
    private static @Nullable Object instance(ConfigurableListableBeanFactory bf, String name) {
        if (!bf.containsSingleton(name) || bf.isFactoryBean(name)) {
            return null;
        }
        try {
            return bf.getBean(name);
        } catch (BeansException e) {
            return null;
        }
    }

    /** The methods of {@code type} (declared or inherited) that carry or inherit {@code @Idempotent}, not READ_ONLY. */
    static List<Method> idempotentMethods(Class<?> type) {
        List<Method> methods = new ArrayList<>();
        for (Method m : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            MergedAnnotation<Idempotent> found = IdempotentAspect.idempotent(m);
            if (found.isPresent() && found.getSource() instanceof Method
                    && found.getEnum("tier", Tier.class) != Tier.READ_ONLY) {
                methods.add(m);
            }
        }
        return methods;
    }

    /** Why a call of {@code method} on the bean never reaches the advice, in the processor's words; null if it does. */
    private static @Nullable String unreachable(String name, @Nullable Object bean, Class<?> userClass, Method method,
            String where) {
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers)) {
            return ProxyReach.privateMethod(where, WEAVING_FIX);
        }
        if (Modifier.isStatic(modifiers)) {
            return ProxyReach.staticMethod(where, WEAVING_FIX);
        }
        boolean interfaceProxy = bean != null && Proxy.isProxyClass(bean.getClass());
        if (interfaceProxy) {
            if (!declaredByAnInterface(bean, method)) {
                return "@Idempotent on " + where + " is never applied: bean '" + name + "' is an interface proxy"
                        + " and none of its interfaces declares " + method.getName() + "; declare it on an interface"
                        + " of the bean, or have Spring proxy the class (proxyTargetClass = true)" + WEAVING_FIX;
            }
        } else if (bean == null || AopUtils.isCglibProxy(bean)) {
            if (Modifier.isFinal(modifiers)) {
                return ProxyReach.finalMethod(where, WEAVING_FIX);
            }
            if (Modifier.isFinal(userClass.getModifiers())) {
                return ProxyReach.finalClass(where, userClass.getSimpleName(), userClass.isRecord() ? " (a record)"
                        : userClass.isEnum() ? " (an enum)" : "", WEAVING_FIX);
            }
        }
        if (bean != null && !advisedByIdempotency(bean)) {
            return "@Idempotent on " + where + " is never applied: bean '" + name + "' is not proxied by the"
                    + " idempotency advice (it was created before the auto-proxy creator, as a dependency of a"
                    + " BeanPostProcessor or a BeanFactoryPostProcessor, or registered as a ready-made instance); let"
                    + " the container create it as an ordinary bean" + WEAVING_FIX;
        }
        return null;
    }

    private static boolean declaredByAnInterface(Object bean, Method method) {
        for (Class<?> i : bean.getClass().getInterfaces()) {
            if (ReflectionUtils.findMethod(i, method.getName(), method.getParameterTypes()) != null) {
                return true;
            }
        }
        return false;
    }

    private static boolean advisedByIdempotency(Object bean) {
        if (!(bean instanceof Advised advised)) {
            return false;
        }
        for (Advisor advisor : advised.getAdvisors()) {
            if (advisor.getAdvice() instanceof IdempotentAspect) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasTransactionAdvice(Advised advised) {
        return Arrays.stream(advised.getAdvisors()).anyMatch(a -> a.getAdvice() instanceof TransactionAspectSupport);
    }

    /** A class woven by AspectJ carries the weaver's {@code ajc$} fields: the weaver, not a proxy, applies the advice. */
    static boolean woven(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (f.getName().startsWith("ajc$")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Builds the descriptor under the keys the advice will look it up by: the class's method, its interfaces'. */
    private static void prepare(Map<String, IdempotentAspectSupport> aspects, @Nullable Object bean, Class<?> userClass,
            Method method, List<String> errors) {
        List<Method> invoked = new ArrayList<>();
        invoked.add(method);
        Class<?>[] interfaces = bean != null && Proxy.isProxyClass(bean.getClass()) ? bean.getClass().getInterfaces()
                : ClassUtils.getAllInterfacesForClass(userClass);
        for (Class<?> i : interfaces) {
            Method m = ReflectionUtils.findMethod(i, method.getName(), method.getParameterTypes());
            if (m != null) {
                invoked.add(m);
            }
        }
        for (IdempotentAspectSupport aspect : aspects.values()) {
            for (Method m : invoked) {
                try {
                    aspect.prepare(m, userClass);
                } catch (RuntimeException e) {
                    errors.add("@Idempotent on " + IdempotentAspect.signature(method) + " cannot be applied: "
                            + e.getMessage());
                    return;
                }
            }
        }
    }

    private static void verifyStores(ConfigurableListableBeanFactory bf, List<String> errors) {
        if (ClassUtils.isPresent(JDBC_STORE, bf.getBeanClassLoader())) {
            JdbcStores.verify(bf, errors);
        }
    }

    /** Loaded only when the JDBC store is on the class path. */
    private static final class JdbcStores {

        static void verify(ConfigurableListableBeanFactory bf, List<String> errors) {
            Map<String, dev.idempotency.jdbc.JdbcIdempotencyStore> stores =
                    bf.getBeansOfType(dev.idempotency.jdbc.JdbcIdempotencyStore.class, false, false);
            boolean boot = ClassUtils.isPresent("org.springframework.boot.SpringApplication", bf.getBeanClassLoader());
            for (dev.idempotency.jdbc.JdbcIdempotencyStore store : stores.values()) {
                try {
                    store.verifySchema();
                } catch (IllegalStateException e) {
                    errors.add(e.getMessage() + (boot && e.getMessage().contains(" does not exist")
                            ? "; or set idempotency.jdbc.initialize-schema=always to have Spring Boot create it at"
                                    + " startup" : ""));
                }
            }
            // the audit is needed at a resolution by hand only: a missing table is said at startup, not fatal
            for (dev.idempotency.jdbc.JdbcIdempotencyAudit audit
                    : bf.getBeansOfType(dev.idempotency.jdbc.JdbcIdempotencyAudit.class, false, false).values()) {
                try {
                    audit.verifyTable();
                } catch (IllegalStateException e) {
                    LOG.warn(e.getMessage() + ": until it exists, every resolution by hand (IdempotencyAdmin,"
                            + " the actuator endpoint) fails");
                }
            }
        }
    }

    private static String wiring(ConfigurableListableBeanFactory bf, Map<String, IdempotentAspectSupport> aspects,
            int operations, int woven) {
        String store;
        if (bf.containsBean(STORE_FRONT_BEAN_NAME)) {
            store = String.valueOf(bf.getBean(STORE_FRONT_BEAN_NAME));
        } else {
            store = bf.getBeansOfType(IdempotencyStore.class, false, false).values().stream().map(String::valueOf)
                    .collect(Collectors.joining(", "));
            store = store.isEmpty() ? "none found as a bean" : store;
        }
        Map<String, String> parts = new LinkedHashMap<>();
        parts.put("store", store);
        parts.put("scope", names(bf, IdempotencyScope.class));
        parts.put("confirmation gate", names(bf, ConfirmationGate.class));
        parts.put("listeners", names(bf, IdempotencyListener.class));
        StringBuilder counted = new StringBuilder().append(operations);
        for (GuardedOperations other : bf.getBeansOfType(GuardedOperations.class, false, false).values()) {
            int count = other.guardedCount();
            if (count > 0) {
                counted.append(" (+").append(count).append(' ').append(other.guardedKind()).append(')');
            }
        }
        parts.put("operations", counted.toString());
        parts.put("advice", aspects.values().stream().map(a -> a instanceof IdempotentAspect proxy
                        ? "proxy (order " + proxy.getOrder() + ")" : "AspectJ weaving (" + a.getClass().getSimpleName()
                                + ")")
                .collect(Collectors.joining(", ")) + (woven > 0 ? ", AspectJ-woven classes " + woven : ""));
        return "Idempotency: " + parts.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining("; "));
    }

    private static String names(ConfigurableListableBeanFactory bf, Class<?> type) {
        String[] names = bf.getBeanNamesForType(type, true, false);
        return names.length == 0 ? "none" : String.join(", ", names);
    }

    /** Where an operation name comes from: the method that carries the annotation, and a method that runs under it. */
    private record Site(Method annotated, Method method) {

        String display() {
            return annotated.getDeclaringClass().getName() + "." + annotated.getName()
                    + Arrays.stream(annotated.getParameterTypes()).map(Class::getSimpleName)
                            .collect(Collectors.joining(", ", "(", ")"));
        }
    }
}
