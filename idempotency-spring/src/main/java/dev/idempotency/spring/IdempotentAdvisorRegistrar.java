package dev.idempotency.spring;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;

/**
 * Applies every {@link IdempotentAspect} bean of the context to the methods annotated {@code @Idempotent}: it defines
 * one advisor per aspect bean, after every configuration class is parsed, so that at equal orders the transaction
 * advisor runs outside the idempotency advice. {@link EnableIdempotency} and the Spring Boot auto-configuration
 * register it; an application needs it only when it declares its own {@code IdempotentAspect} bean without either,
 * as a {@code static @Bean} method.
 */
public final class IdempotentAdvisorRegistrar implements BeanDefinitionRegistryPostProcessor {

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        if (registry instanceof ListableBeanFactory factory) {
            IdempotentAdvisor.registerFor(registry, factory);
        }
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
    }
}
