package dev.idempotency.spring;

import java.util.Objects;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.PointcutAdvisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
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

    @Override
    public String toString() {
        return "IdempotentAdvisor[" + aspectBeanName + "]";
    }
}
