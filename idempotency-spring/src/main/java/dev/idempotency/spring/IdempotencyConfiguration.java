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
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.io.ResourceLoader;
import tools.jackson.databind.json.JsonMapper;

/**
 * What {@link EnableIdempotency} imports in either mode: the default executor and admin. The advice comes from
 * {@link ProxyIdempotencyConfiguration} ({@code AdviceMode.PROXY}) or from the AspectJ module's configuration
 * ({@code AdviceMode.ASPECTJ}), never both.
 */
@Configuration(proxyBeanMethods = false)
class IdempotencyConfiguration {

    /** The name of the executor bean registered when the context has none. */
    static final String EXECUTOR_BEAN_NAME = "idempotentExecutor";

    /** The name of the admin bean registered when the context has none (the Boot auto-configuration's too). */
    static final String ADMIN_BEAN_NAME = "idempotencyAdmin";

    /**
     * Registers the advisor of every aspect bean, the default executor only if no {@code IdempotentExecutor} bean is
     * defined by then, and the default admin only if no {@code IdempotencyAdmin} bean is and there is one store (or a primary one) for it.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanDefinitionRegistryPostProcessor idempotentExecutorRegistrar() {
        return new ExecutorRegistrar();
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
