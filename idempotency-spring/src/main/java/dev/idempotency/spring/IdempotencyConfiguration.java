package dev.idempotency.spring;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyObserver;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import java.util.Arrays;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@link EnableIdempotency} imports. Usable on its own (an auto-configuration may import it): without the
 * annotation's attributes it uses their defaults.
 */
@Configuration(proxyBeanMethods = false)
@EnableAspectJAutoProxy
class IdempotencyConfiguration implements ImportAware {

    /** The name of the executor bean registered when the context has none. */
    static final String EXECUTOR_BEAN_NAME = "idempotentExecutor";

    /** The name of the admin bean registered when the context has none (the Boot auto-configuration's too). */
    static final String ADMIN_BEAN_NAME = "idempotencyAdmin";

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

    /**
     * Registers the advisor of every aspect bean, the default executor only if no {@code IdempotentExecutor} bean is
     * defined by then, and the default admin only if no {@code IdempotencyAdmin} bean is and there is one store (or a primary one) for it.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanDefinitionRegistryPostProcessor idempotentExecutorRegistrar() {
        return new ExecutorRegistrar();
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static SmartInitializingSingleton idempotencyOrderCheck(ListableBeanFactory beanFactory) {
        return () -> checkOrder(beanFactory);
    }

    /**
     * Builds the default executor from the context's beans (the factory method of the bean the registrar adds).
     *
     * @throws IllegalStateException if the context has no {@code IdempotencyStore} bean, or several and none of them
     *                               primary
     */
    static IdempotentExecutor defaultExecutor(ObjectProvider<IdempotencyStore> store,
            ObjectProvider<ResultCodec> codec, ObjectProvider<JsonMapper> mapper, ObjectProvider<IdempotencyScope> scope,
            ObjectProvider<ConfirmationGate> gate, ObjectProvider<IdempotencyListener> listeners,
            ObjectProvider<IdempotencyObserver> observer, ObjectProvider<Clock> clock, ListableBeanFactory beans) {
        IdempotencyStore theStore = store.getIfUnique();
        if (theStore == null) {
            long count = store.stream().count();
            if (count > 1) {
                throw new IllegalStateException("@EnableIdempotency found " + count + " IdempotencyStore beans and "
                        + "none is @Primary: mark the one the idempotent methods use @Primary, or declare an "
                        + "IdempotentExecutor bean of your own");
            }
            throw new IllegalStateException("@EnableIdempotency needs an IdempotencyStore bean and there is none: "
                    + "declare one, such as JdbcIdempotencyStore.builder(dataSource).build() (or new "
                    + "InMemoryIdempotencyStore() in tests), or an IdempotentExecutor bean of your own");
        }
        IdempotentExecutor.Builder builder = IdempotentExecutor.builder(theStore)
                .transactions(SpringTransactionBridge.INSTANCE);
        codec.ifUnique(builder::codec);
        mapper.ifUnique(builder::jsonMapper);
        IdempotencyScope theScope = single(scope, IdempotencyScope.class, beans, SCOPE_RISK);
        if (theScope != null) {
            builder.scope(theScope);
        }
        ConfirmationGate theGate = single(gate, ConfirmationGate.class, beans, GATE_RISK);
        if (theGate != null) {
            builder.confirmationGate(theGate);
        }
        clock.ifUnique(builder::clock);
        observer.ifUnique(builder::observer);
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    static final String SCOPE_RISK = "the executor would run with none of them, and one tenant's key could replay"
            + " another tenant's result";
    static final String GATE_RISK = "the executor would run with none of them, and an IRREVERSIBLE call would run"
            + " unconfirmed";

    /**
     * The one bean of {@code type}, or its {@code @Primary} one; null when there is none.
     *
     * @throws IllegalStateException naming the beans, when there are several and none is primary: where one bean
     *                               guards isolation or confirmation, silently using none is the worst choice
     */
    static <T> @Nullable T single(ObjectProvider<T> provider, Class<T> type, ListableBeanFactory beans, String risk) {
        T found = provider.getIfUnique();
        if (found == null) {
            String[] names = beans.getBeanNamesForType(type, true, false);
            if (names.length > 1) {
                throw new IllegalStateException("found " + names.length + " " + type.getSimpleName() + " beans ("
                        + String.join(", ", names) + ") and none is @Primary: " + risk + ". Mark the one to use"
                        + " @Primary, or declare an IdempotentExecutor bean of your own");
            }
        }
        return found;
    }

    /**
     * Builds the default admin on the context's store, with the codec and clock the default executor takes: a result
     * resolved through it replays, and it judges leases by the same time (the factory method of the bean the
     * registrar adds).
     */
    static IdempotencyAdmin defaultAdmin(ObjectProvider<IdempotencyStore> store, ObjectProvider<ResultCodec> codec,
            ObjectProvider<JsonMapper> mapper, ObjectProvider<Clock> clock, ResourceLoader resourceLoader) {
        IdempotencyStore theStore = store.getIfUnique();
        if (theStore == null) {
            throw new IllegalStateException("the default IdempotencyAdmin needs one IdempotencyStore bean (or a "
                    + "@Primary one); declare an IdempotencyAdmin bean of your own");
        }
        ResultCodec theCodec = codec.getIfUnique(() -> {
            JsonMapper theMapper = mapper.getIfUnique();
            return theMapper != null ? JacksonResultCodec.using(theMapper) : JacksonResultCodec.create();
        });
        IdempotencyAdmin.Builder builder = IdempotencyAdmin.builder(theStore).codec(theCodec);
        clock.ifUnique(builder::clock);
        ClassLoader classLoader = resourceLoader.getClassLoader();
        if (classLoader != null) {
            builder.classLoader(classLoader);
        }
        return builder.build();
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

    private static final class ExecutorRegistrar implements BeanDefinitionRegistryPostProcessor {

        @Override
        public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) throws BeansException {
            // runs after every @Configuration class is parsed, so a user's own executor bean is already defined
            if (!(registry instanceof ListableBeanFactory factory)) {
                return;
            }
            IdempotentAdvisor.registerFor(registry, factory);
            if (factory.getBeanNamesForType(IdempotentExecutor.class, true, false).length == 0
                    && !registry.containsBeanDefinition(EXECUTOR_BEAN_NAME)) {
                register(registry, EXECUTOR_BEAN_NAME, "defaultExecutor", IdempotentExecutor.class);
            }
            if (factory.getBeanNamesForType(IdempotencyAdmin.class, true, false).length == 0
                    && !registry.containsBeanDefinition(ADMIN_BEAN_NAME) && oneStore(registry, factory)) {
                register(registry, ADMIN_BEAN_NAME, "defaultAdmin", IdempotencyAdmin.class);
            }
        }

        /** One store bean, or a primary one among several: the store the admin works on. */
        private static boolean oneStore(BeanDefinitionRegistry registry, ListableBeanFactory factory) {
            String[] stores = factory.getBeanNamesForType(IdempotencyStore.class, true, false);
            return stores.length == 1 || Arrays.stream(stores)
                    .anyMatch(name -> registry.containsBeanDefinition(name)
                            && registry.getBeanDefinition(name).isPrimary());
        }

        private static void register(BeanDefinitionRegistry registry, String name, String factoryMethod,
                Class<?> type) {
            RootBeanDefinition definition = new RootBeanDefinition(IdempotencyConfiguration.class);
            definition.setFactoryMethodName(factoryMethod);
            definition.setAutowireMode(AbstractBeanDefinition.AUTOWIRE_CONSTRUCTOR);
            definition.setTargetType(type);
            registry.registerBeanDefinition(name, definition);
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        }
    }
}
