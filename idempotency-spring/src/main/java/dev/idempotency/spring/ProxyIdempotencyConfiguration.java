package dev.idempotency.spring;

import dev.idempotency.IdempotentExecutor;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;

/**
 * The proxy advice {@link EnableIdempotency} imports in {@code AdviceMode.PROXY} (the default): the
 * {@link IdempotentAspect} bean (its advisor is registered beside the default executor) and auto-proxying. Without the
 * annotation's attributes it uses their defaults.
 */
@Configuration(proxyBeanMethods = false)
@EnableAspectJAutoProxy
class ProxyIdempotencyConfiguration implements ImportAware {

    private int order = Ordered.LOWEST_PRECEDENCE;

    @Override
    public void setImportMetadata(AnnotationMetadata importMetadata) {
        AnnotationAttributes attributes = AnnotationAttributes.fromMap(
                importMetadata.getAnnotationAttributes(EnableIdempotency.class.getName()));
        if (attributes != null) {
            this.order = attributes.getNumber("order").intValue();
        }
    }

    @Bean
    IdempotentAspect idempotentAspect(IdempotentExecutor executor, ObjectProvider<KeyResolver> keyResolver,
            ObjectProvider<IdempotentAspectCustomizer> customizers) {
        IdempotentAspect aspect = new IdempotentAspect(executor, keyResolver.getIfUnique(KeyResolver::create));
        aspect.setOrder(order);
        customizers.orderedStream().forEach(customizer -> customizer.customize(aspect));
        return aspect;
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SmartInitializingSingleton idempotencyOrderCheck(ListableBeanFactory beanFactory) {
        return () -> checkOrder(beanFactory);
    }

    private static void checkOrder(ListableBeanFactory beanFactory) {
        Map<String, IdempotentAspect> aspects = beanFactory.getBeansOfType(IdempotentAspect.class, false, false);
        Map<String, BeanFactoryTransactionAttributeSourceAdvisor> advisors =
                beanFactory.getBeansOfType(BeanFactoryTransactionAttributeSourceAdvisor.class, false, false);
        for (Map.Entry<String, IdempotentAspect> aspect : aspects.entrySet()) {
            for (Map.Entry<String, BeanFactoryTransactionAttributeSourceAdvisor> advisor : advisors.entrySet()) {
                if (advisor.getValue().getOrder() > aspect.getValue().getOrder()) {
                    throw new IllegalStateException("The transaction advisor '" + advisor.getKey() + "' has order "
                            + advisor.getValue().getOrder() + ", higher than the order " + aspect.getValue().getOrder()
                            + " of the idempotency aspect '" + aspect.getKey() + "': @Transactional would run inside "
                            + "@Idempotent, and the claim of a key would not be written in the method's transaction. "
                            + "Give @EnableTransactionManagement(order = ...) a value lower than, or equal to, "
                            + "@EnableIdempotency(order = ...).");
                }
            }
        }
    }
}
