package dev.idempotency.spring;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.Ordered;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;

/**
 * Applies an {@link IdempotentAspect} bean where {@link IdempotentAspect#POINTCUT} matches, at the aspect's order.
 * The aspect (and with it the executor and the store) is looked up when the advice is first needed, not when the
 * auto-proxy creator collects advisors. Registered by {@link IdempotencyConfiguration} after every configuration class
 * is parsed, so that with equal orders the transaction advisor, registered earlier, runs outside it.
 *
 * <p>A second advisor of each aspect ({@code beforeTransaction}) applies {@link IdempotentAspect#beforeTransaction()}
 * to the {@code @Idempotent} methods that a transaction advisor ({@code @EnableTransactionManagement}) also applies
 * to, at an order one lower than the lowest such advisor's: just outside the method's transaction. There a duplicate
 * that the store's pre-filter holds is answered before a transaction begins; everything else proceeds as before. It
 * applies to nothing when there is no transaction advisor (or its order is {@link Ordered#HIGHEST_PRECEDENCE}), nor to
 * a method whose transaction advice must refuse some calls first ({@code MANDATORY}, {@code NEVER}).
 */
final class IdempotentAdvisor implements PointcutAdvisor, Ordered, BeanFactoryAware {

    private final String aspectBeanName;
    private final boolean beforeTransaction;
    private @Nullable BeanFactory beanFactory;
    private volatile @Nullable IdempotentAspect aspect;
    /** The transaction advisors, found when first needed (once there is one). */
    private volatile @Nullable List<BeanFactoryTransactionAttributeSourceAdvisor> transactionAdvisors;

    IdempotentAdvisor(String aspectBeanName, boolean beforeTransaction) {
        this.aspectBeanName = Objects.requireNonNull(aspectBeanName, "aspectBeanName");
        this.beforeTransaction = beforeTransaction;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public Pointcut getPointcut() {
        return beforeTransaction ? beforeTransactionPointcut : IdempotentAspect.POINTCUT;
    }

    @Override
    public Advice getAdvice() {
        return beforeTransaction ? aspect().beforeTransaction() : aspect();
    }

    @Override
    public boolean isPerInstance() {
        return true;
    }

    @Override
    public int getOrder() {
        if (!beforeTransaction) {
            return aspect().getOrder();
        }
        int order = Ordered.LOWEST_PRECEDENCE;
        for (BeanFactoryTransactionAttributeSourceAdvisor advisor : transactionAdvisors()) {
            order = Math.min(order, advisor.getOrder());
        }
        return order == Ordered.HIGHEST_PRECEDENCE ? order : order - 1;
    }

    /** {@code @Idempotent} methods that a transaction advisor applies to too. */
    private final Pointcut beforeTransactionPointcut = new StaticMethodMatcherPointcut() {
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            if (!IdempotentAspect.POINTCUT.getMethodMatcher().matches(method, targetClass)
                    || !IdempotentAspectSupport.answerableBeforeTransaction(method, targetClass)) {
                return false;
            }
            for (BeanFactoryTransactionAttributeSourceAdvisor advisor : transactionAdvisors()) {
                Pointcut pc = advisor.getPointcut();
                if (advisor.getOrder() != Ordered.HIGHEST_PRECEDENCE && pc.getClassFilter().matches(targetClass)
                        && pc.getMethodMatcher().matches(method, targetClass)) {
                    return true;
                }
            }
            return false;
        }
    };

    private List<BeanFactoryTransactionAttributeSourceAdvisor> transactionAdvisors() {
        List<BeanFactoryTransactionAttributeSourceAdvisor> found = transactionAdvisors;
        if (found == null) {
            if (!(beanFactory instanceof ListableBeanFactory factory)) {
                return List.of();
            }
            found = List.copyOf(factory.getBeansOfType(BeanFactoryTransactionAttributeSourceAdvisor.class, false,
                    false).values());
            if (found.isEmpty()) {
                // perhaps not made yet: asked again next time
                return found;
            }
            transactionAdvisors = found;
        }
        return found;
    }

    private IdempotentAspect aspect() {
        IdempotentAspect a = aspect;
        if (a == null) {
            BeanFactory factory = Objects.requireNonNull(beanFactory, "beanFactory");
            a = factory.getBean(aspectBeanName, IdempotentAspect.class);
            aspect = a;
        }
        return a;
    }

    /**
     * Defines an advisor for every {@link IdempotentAspect} bean that has none yet, and the
     * {@link IdempotencyStartupCheck} once if there is any advice (proxied or woven). Called by a
     * {@code BeanDefinitionRegistryPostProcessor}, so after every configuration class: at equal orders the transaction
     * advisor, defined earlier, then runs outside the idempotency advice.
     */
    static void registerFor(BeanDefinitionRegistry registry, ListableBeanFactory factory) {
        String[] aspects = factory.getBeanNamesForType(IdempotentAspect.class, true, false);
        // the woven aspect (AdviceMode.ASPECTJ) has no advisor, but the same startup check
        if (factory.getBeanNamesForType(IdempotentAspectSupport.class, true, false).length > 0
                && !registry.containsBeanDefinition(IdempotencyStartupCheck.BEAN_NAME)) {
            RootBeanDefinition check = new RootBeanDefinition(IdempotencyStartupCheck.class);
            check.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
            registry.registerBeanDefinition(IdempotencyStartupCheck.BEAN_NAME, check);
        }
        for (String aspect : aspects) {
            define(registry, aspect, aspect + "Advisor", false);
            define(registry, aspect, aspect + "BeforeTransactionAdvisor", true);
        }
    }

    private static void define(BeanDefinitionRegistry registry, String aspect, String advisor,
            boolean beforeTransaction) {
        if (!registry.containsBeanDefinition(advisor)) {
            RootBeanDefinition definition = new RootBeanDefinition(IdempotentAdvisor.class);
            definition.getConstructorArgumentValues().addIndexedArgumentValue(0, aspect);
            definition.getConstructorArgumentValues().addIndexedArgumentValue(1, beforeTransaction);
            definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
            registry.registerBeanDefinition(advisor, definition);
        }
    }

    @Override
    public String toString() {
        return "IdempotentAdvisor[" + aspectBeanName + (beforeTransaction ? ", before the transaction]" : "]");
    }
}
