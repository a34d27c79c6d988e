package dev.idempotency.benchmarks.orders;

import dev.idempotency.benchmarks.Guard;
import dev.idempotency.benchmarks.GuardTables;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import javax.sql.DataSource;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.integration.metadata.ConcurrentMetadataStore;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * One Spring context per guard, each wired the way its documentation shows: the same pool, transaction manager and
 * class-based proxies (as Spring Boot makes them) for all.
 */
public final class OrderContexts {

    private OrderContexts() {
    }

    /** Starts the context of {@code guard} on {@code dataSource}; close it after the trial. */
    public static AnnotationConfigApplicationContext start(Guard guard, OrderTables tables, DataSource dataSource) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        // the trial owns the pool: the context must not close it
        context.registerBean(DataSource.class, () -> dataSource, bd -> bd.setDestroyMethodName(""));
        context.registerBean(OrderTables.class, () -> tables);
        context.register(Common.class, configuration(guard));
        context.refresh();
        return context;
    }

    private static Class<?> configuration(Guard guard) {
        switch (guard) {
            case A:
                return UnguardedConfig.class;
            case B:
            case P:
                return OursConfig.class;
            case C:
                return HandWrittenConfig.class;
            case F:
                return HandWrittenWithLockTimeoutConfig.class;
            case D:
                return SpringIntegrationConfig.class;
            case E:
                return CamelConfig.class;
            default:
                throw new IllegalArgumentException("no configuration for guard " + guard);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(proxyTargetClass = true)
    static class Common {
        @Bean
        DataSourceTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        JsonMapper jsonMapper() {
            return JsonMapper.builder().build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UnguardedConfig {
        @Bean
        Unguarded placeOrder(JdbcTemplate jdbc, OrderTables tables) {
            return new Unguarded(jdbc, tables);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class OursConfig {
        @Bean
        JdbcIdempotencyStore idempotencyStore(DataSource dataSource, OrderTables tables) {
            return JdbcIdempotencyStore.builder(dataSource).tableName(tables.guard()).build();
        }

        @Bean
        Ours placeOrder(JdbcTemplate jdbc, OrderTables tables) {
            return new Ours(jdbc, tables);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HandWrittenConfig {
        @Bean
        HandWritten placeOrder(JdbcTemplate jdbc, JsonMapper json, OrderTables tables) {
            return new HandWritten(jdbc, json, tables, false);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HandWrittenWithLockTimeoutConfig {
        @Bean
        HandWritten placeOrder(JdbcTemplate jdbc, JsonMapper json, OrderTables tables) {
            return new HandWritten(jdbc, json, tables, true);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SpringIntegrationConfig {
        @Bean
        JdbcMetadataStore metadataStore(DataSource dataSource, OrderTables tables) {
            JdbcMetadataStore store = new JdbcMetadataStore(dataSource);
            store.setTablePrefix(tables.siPrefix());
            return store;
        }

        @Bean
        SpringIntegrationGuarded placeOrder(JdbcTemplate jdbc, JsonMapper json, ConcurrentMetadataStore store,
                OrderTables tables) {
            return new SpringIntegrationGuarded(jdbc, json, store, tables);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CamelConfig {
        @Bean(initMethod = "start", destroyMethod = "stop")
        JdbcMessageIdRepository messageIdRepository(DataSource dataSource, PlatformTransactionManager transactions,
                OrderTables tables) {
            // a TransactionTemplate on our transaction manager (PROPAGATION_REQUIRED): add() joins the business one
            JdbcMessageIdRepository repository = new JdbcMessageIdRepository(dataSource,
                    new TransactionTemplate(transactions), GuardTables.CAMEL_PROCESSOR);
            repository.setTableName(tables.guard());
            repository.setCreateTableIfNotExists(false);
            return repository;
        }

        @Bean
        CamelGuarded placeOrder(JdbcTemplate jdbc, JdbcMessageIdRepository repository, OrderTables tables) {
            return new CamelGuarded(jdbc, repository, tables);
        }
    }
}
