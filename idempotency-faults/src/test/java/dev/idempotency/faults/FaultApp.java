package dev.idempotency.faults;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import java.time.Clock;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One application, as a user writes it: {@code @EnableTransactionManagement}, {@code @EnableIdempotency}, a
 * {@code DataSourceTransactionManager} and the {@code JdbcIdempotencyStore} on the same {@code DataSource} (the
 * {@link FaultInjector}), optionally behind a {@code CaffeinePrefilter}, a {@code Clock} bean, and the {@link Shop}.
 * Several may share one database (a second node, a skewed clock, a child JVM).
 */
final class FaultApp implements AutoCloseable {

    /** What differs between the applications of one suite. */
    record Options(String node, Clock clock, boolean prefilter) {

        static Options node(String node) {
            return new Options(node, Clock.systemUTC(), false);
        }

        Options withClock(Clock clock) {
            return new Options(node, clock, prefilter);
        }

        Options withPrefilter() {
            return new Options(node, clock, true);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableIdempotency
    static class Config {

        @Bean
        PlatformTransactionManager transactionManager(FaultInjector dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        IdempotencyStore idempotencyStore(FaultInjector dataSource, Tables tables, Options options) {
            IdempotencyStore jdbc = JdbcIdempotencyStore.builder(dataSource).tableName(tables.idempotency()).build();
            if (!options.prefilter()) {
                return jdbc;
            }
            return CaffeinePrefilter.wrap(jdbc).transactions(SpringTransactionBridge.INSTANCE)
                    .clock(options.clock()).build();
        }

        @Bean
        Clock clock(Options options) {
            return options.clock();
        }

        @Bean
        Shop shop(FaultInjector dataSource, Tables tables, History history, Pauses pauses, Options options) {
            return new Shop(dataSource, tables, history, dataSource, pauses, options.node());
        }
    }

    final AnnotationConfigApplicationContext context;
    final Shop shop;
    final IdempotencyAdmin admin;
    final PlatformTransactionManager transactions;
    final FaultInjector injector;
    final History history;
    final Pauses pauses;

    private FaultApp(AnnotationConfigApplicationContext context, FaultInjector injector, History history,
            Pauses pauses) {
        this.context = context;
        this.shop = context.getBean(Shop.class);
        this.admin = context.getBean(IdempotencyAdmin.class);
        this.transactions = context.getBean(PlatformTransactionManager.class);
        this.injector = injector;
        this.history = history;
        this.pauses = pauses;
    }

    static FaultApp start(FaultInjector injector, Tables tables, History history, Pauses pauses, Options options) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        // the suite closes the pool after dropping its tables: the context must not close it first
        context.registerBean("dataSource", FaultInjector.class, () -> injector, bd -> bd.setDestroyMethodName(""));
        context.registerBean(Tables.class, () -> tables);
        context.registerBean(History.class, () -> history);
        context.registerBean(Pauses.class, () -> pauses);
        context.registerBean(Options.class, () -> options);
        context.register(Config.class);
        context.refresh();
        return new FaultApp(context, injector, history, pauses);
    }

    /** A template of this application's transaction manager. */
    TransactionTemplate tx() {
        return new TransactionTemplate(transactions);
    }

    /** A template that opens a nested scope (a savepoint) inside the current transaction. */
    TransactionTemplate nested() {
        TransactionTemplate t = new TransactionTemplate(transactions);
        t.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
        return t;
    }

    @Override
    public void close() {
        context.close();
    }
}
