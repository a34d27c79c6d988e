package dev.idempotency.spring;

import dev.idempotency.metrics.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * The context every aspect test shares: an embedded H2 database (orders table), its transaction manager,
 * {@code @EnableTransactionManagement} at its default order, the meters, the test beans. The importing class adds the
 * {@code IdempotencyStore} bean and {@code @EnableIdempotency} (proxied here, woven in idempotency-aspectj: the same
 * suite runs in every mode).
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@Import({OrderService.class, PaymentService.class, HostileKeys.class})
class AspectTestConfiguration {

    @Bean
    SimpleMeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    MicrometerIdempotencyListener meters(SimpleMeterRegistry registry) {
        return new MicrometerIdempotencyListener(registry);
    }


    @Bean(destroyMethod = "shutdown")
    org.springframework.jdbc.datasource.embedded.EmbeddedDatabase dataSource() {
        return new EmbeddedDatabaseBuilder()
                .setType(EmbeddedDatabaseType.H2)
                .generateUniqueName(true)
                .addScript("classpath:dev/idempotency/spring/orders-h2.sql")
                .build();
    }

    @Bean
    PaymentService.Ledger paymentLedger() {
        return new PaymentService.Ledger();
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }
}
