package dev.idempotency.spring;

import java.util.Objects;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.Ordered;

/**
 * Applies an {@link IdempotentAspect} bean where {@link IdempotentAspect#POINTCUT} matches, at the aspect's order.
 * The aspect (and with it the executor and the store) is looked up when the advice is first needed, not when the
 * auto-proxy creator collects advisors. Registered by {@link IdempotencyConfiguration} after every configuration class
 * is parsed, so that with equal orders the transaction advisor, registered earlier, runs outside it.
 */
final class IdempotentAdvisor implements PointcutAdvisor, Ordered, BeanFactoryAware {

    private final String aspectBeanName;
    private @Nullable BeanFactory beanFactory;
    private volatile @Nullable IdempotentAspect aspect;

    IdempotentAdvisor(String aspectBeanName) {
        this.aspectBeanName = Objects.requireNonNull(aspectBeanName, "aspectBeanName");
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public Pointcut getPointcut() {
        return IdempotentAspect.POINTCUT;
    }

    @Override
    public Advice getAdvice() {
        return aspect();
    }

    @Override
    public boolean isPerInstance() {
        return true;
    }

    @Override
    public int getOrder() {
        return aspect().getOrder();
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
            String advisor = aspect + "Advisor";
            if (!registry.containsBeanDefinition(advisor)) {
                RootBeanDefinition definition = new RootBeanDefinition(IdempotentAdvisor.class);
                definition.getConstructorArgumentValues().addIndexedArgumentValue(0, aspect);
                definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
                registry.registerBeanDefinition(advisor, definition);
            }
        }
    }

    @Override
    public String toString() {
        return "IdempotentAdvisor[" + aspectBeanName + "]";
    }
}
