package dev.idempotency.sample.order;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.store.IdempotencyStore;
import javax.sql.DataSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/** The order service's Spring context: embedded H2, its transaction manager, and (protected) idempotency. */
final class SampleConfiguration {

    private SampleConfiguration() {
    }

    /** Starts the context; {@code protect} adds {@code @EnableIdempotency} and the JDBC store. */
    static AnnotationConfigApplicationContext start(boolean protect, Timings timings) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(Timings.class, () -> timings);
        context.register(protect ? Protected.class : Database.class);
        context.refresh();
        return context;
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Database {

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder()
                    .setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true)
                    // the idempotency table, from the very script the JDBC store ships
                    .addScript("classpath:dev/idempotency/jdbc/schema-h2.sql")
                    .addScript("classpath:dev/idempotency/sample/order/orders-h2.sql")
                    .build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        OrderService orderService(DataSource dataSource, Timings timings) {
            return new OrderService(dataSource, timings.processingTime());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Database.class)
    static class Protected {

        @Bean
        IdempotencyStore idempotencyStore(DataSource dataSource) {
            return JdbcIdempotencyStore.builder(dataSource).build();
        }
    }
}
