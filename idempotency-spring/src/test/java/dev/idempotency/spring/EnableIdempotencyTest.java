package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyObserver;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import dev.idempotency.store.tck.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/** What {@code @EnableIdempotency} registers, and what it takes from the context. */
class EnableIdempotencyTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    /** A bean whose key uses a static method and a bean reference: allowed only by an opted-in KeyResolver. */
    public static class Greeter {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Idempotent(key = "T(java.lang.String).valueOf(#id) + @suffix", tier = Tier.REVERSIBLE)
        public String greet(String id) {
            return "hello " + id + " " + RUNS.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Greeter.class)
    static class WithStore {
        static final List<IdempotencyEvent> EVENTS = new CopyOnWriteArrayList<>();
        static final List<String> OBSERVED = new CopyOnWriteArrayList<>();

        @Bean
        IdempotencyObserver observer() {
            return new IdempotencyObserver() {
                @Override
                public <T, E extends Throwable> T around(IdempotentOperation<?> operation,
                        Invocation<T, E> invocation) throws E {
                    T result = invocation.proceed();
                    OBSERVED.add(operation.name() + " " + invocation.outcome().orElseThrow());
                    return result;
                }
            };
        }

        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        IdempotencyListener listener() {
            return EVENTS::add;
        }

        @Bean
        KeyResolver keyResolver(BeanFactory beanFactory) {
            return KeyResolver.builder().allowTypeReferences().allowBeanReferences(beanFactory).build();
        }

        @Bean
        String suffix() {
            return ":S";
        }
    }

    @Test
    void theDefaultExecutorIsABeanOnTheContextsStoreListenersAndObserverAndAKeyResolverBeanOptsIn() {
        try (var ctx = new AnnotationConfigApplicationContext(WithStore.class)) {
            Greeter greeter = ctx.getBean(Greeter.class);
            int before = Greeter.RUNS.get();

            String first = greeter.greet("a");
            assertThat(greeter.greet("a")).isEqualTo(first);

            assertThat(Greeter.RUNS.get() - before).isEqualTo(1);
            assertThat(ctx.getBeansOfType(IdempotentExecutor.class)).containsOnlyKeys("idempotentExecutor");
            assertThat(ctx.getBean(InMemoryIdempotencyStore.class)
                    .find(Keys.hash("Greeter.greet", "", "a:S"))).isPresent();
            assertThat(WithStore.EVENTS).extracting(IdempotencyEvent::outcome)
                    .containsExactly(IdempotencyEvent.Outcome.EXECUTED, IdempotencyEvent.Outcome.REPLAYED);
            assertThat(WithStore.OBSERVED).containsExactly("Greeter.greet EXECUTED", "Greeter.greet REPLAYED");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Greeter.class)
    static class WithOwnExecutor {
        static final InMemoryIdempotencyStore STORE = new InMemoryIdempotencyStore();

        @Bean
        IdempotentExecutor myExecutor() {
            return IdempotentExecutor.builder(STORE).transactions(SpringTransactionBridge.INSTANCE).build();
        }

        @Bean
        KeyResolver keyResolver(BeanFactory beanFactory) {
            return KeyResolver.builder().allowTypeReferences().allowBeanReferences(beanFactory).build();
        }

        @Bean
        String suffix() {
            return ":own";
        }
    }

    @Test
    void anExecutorBeanOfTheApplicationsOwnIsUsedAndNoOtherIsRegistered() {
        try (var ctx = new AnnotationConfigApplicationContext(WithOwnExecutor.class)) {
            ctx.getBean(Greeter.class).greet("b");

            assertThat(ctx.getBeansOfType(IdempotentExecutor.class)).containsOnlyKeys("myExecutor");
            assertThat(WithOwnExecutor.STORE.find(Keys.hash("Greeter.greet", "", "b:own"))).isPresent();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class WithoutStore {
    }

    @Test
    void withoutAStoreTheContextFailsSayingWhatToDeclare() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(WithoutStore.class).close())
                .hasStackTraceContaining("@EnableIdempotency needs an IdempotencyStore bean and there is none");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Counter.class)
    static class WithTwoStoresNeitherPrimary {
        @Bean
        IdempotencyStore oneStore() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        IdempotencyStore otherStore() {
            return new InMemoryIdempotencyStore();
        }
    }

    @Test
    void withSeveralStoresAndNoPrimaryTheContextFailsSayingToMarkOne() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(WithTwoStoresNeitherPrimary.class).close())
                .hasStackTraceContaining("@EnableIdempotency found 2 IdempotencyStore beans and none is @Primary:"
                        + " mark the one the idempotent methods use @Primary");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableIdempotency(order = Ordered.HIGHEST_PRECEDENCE)
    static class AspectOutsideTheTransaction {
        @Bean
        IdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(EmbeddedDatabase dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void anAspectOrderedOutsideTheTransactionAdvisorFailsAtStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(AspectOutsideTheTransaction.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@Transactional would run inside @Idempotent")
                .hasMessageContaining("@EnableIdempotency(order = ...)");
    }

    /** A bean with a plain key; its operation is {@code Counter.next}. */
    public static class Counter {
        final AtomicInteger runs = new AtomicInteger();

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE, ttl = "1h")
        public int next(String id) {
            return runs.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Counter.class)
    static class WithStoreAndClock {
        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        MutableClock clock() {
            return MutableClock.at(Instant.parse("2026-01-01T00:00:00Z"));
        }
    }

    @Test
    void anAdminBeanWorksOnTheContextsStoreByTheContextsClock() {
        try (var ctx = new AnnotationConfigApplicationContext(WithStoreAndClock.class)) {
            Counter counter = ctx.getBean(Counter.class);
            MutableClock clock = ctx.getBean(MutableClock.class);
            assertThat(ctx.getBeansOfType(IdempotencyAdmin.class)).containsOnlyKeys("idempotencyAdmin");
            IdempotencyAdmin admin = ctx.getBean(IdempotencyAdmin.class);

            assertThat(counter.next("K")).isEqualTo(1);
            IdempotencyAdmin.Entry entry = admin.find("Counter.next", "K").orElseThrow();
            assertThat(entry.status()).isEqualTo(Status.COMPLETED);
            assertThat(entry.createdAt()).isEqualTo(clock.instant());
            assertThat(entry.expired()).isFalse();
            clock.advance(Duration.ofHours(2));
            assertThat(admin.find("Counter.next", "K").orElseThrow().expired())
                    .as("judged by the context's clock, past the 1h ttl").isTrue();

            assertThat(admin.evict("Counter.next", "K", BY)).isTrue();
            assertThat(counter.next("K")).as("evicted, the key runs again").isEqualTo(2);
            assertThat(counter.next("K")).isEqualTo(2);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class WithOwnAdmin {
        static final InMemoryIdempotencyStore STORE = new InMemoryIdempotencyStore();

        @Bean
        IdempotencyStore store() {
            return STORE;
        }

        @Bean
        IdempotencyAdmin myAdmin() {
            return IdempotencyAdmin.builder(STORE).build();
        }
    }

    @Test
    void anAdminBeanOfTheApplicationsOwnIsTheOnlyOne() {
        try (var ctx = new AnnotationConfigApplicationContext(WithOwnAdmin.class)) {
            assertThat(ctx.getBeansOfType(IdempotencyAdmin.class)).containsOnlyKeys("myAdmin");
        }
    }

    @Test
    void withoutAStoreBeanNoAdminIsRegistered() {
        try (var ctx = new AnnotationConfigApplicationContext(WithOwnExecutor.class)) {
            assertThat(ctx.getBeansOfType(IdempotencyAdmin.class)).isEmpty();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Counter.class)
    static class WithTwoStores {
        static final InMemoryIdempotencyStore PRIMARY = new InMemoryIdempotencyStore();

        @Bean
        @Primary
        IdempotencyStore primaryStore() {
            return PRIMARY;
        }

        @Bean
        IdempotencyStore otherStore() {
            return new InMemoryIdempotencyStore();
        }
    }

    @Test
    void withSeveralStoresTheAdminWorksOnThePrimaryOne() {
        try (var ctx = new AnnotationConfigApplicationContext(WithTwoStores.class)) {
            ctx.getBean(Counter.class).next("P");
            assertThat(ctx.getBean(IdempotencyAdmin.class).find("Counter.next", "P")).isPresent();
            assertThat(WithTwoStores.PRIMARY.find(Keys.hash("Counter.next", "", "P"))).isPresent();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class WovenWithoutTheAspectJModule {
    }

    @Test
    void theAspectJModeWithoutIdempotencyAspectjOnTheClassPathFailsSayingWhatIsMissing() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(WovenWithoutTheAspectJModule.class).close())
                .rootCause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@EnableIdempotency(mode = AdviceMode.ASPECTJ) needs"
                        + " dev.idempotency:idempotency-aspectj on the class path");
    }
}
