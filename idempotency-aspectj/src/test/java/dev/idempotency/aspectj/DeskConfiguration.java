package dev.idempotency.aspectj;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * H2 with the JDBC store's own schema script and an orders table, its transaction manager, the store (counting its
 * claims) on the same {@code DataSource}, and the {@link OrderDesk}. The test adds {@code @EnableTransactionManagement}
 * and {@code @EnableIdempotency} in the modes under test.
 */
@Configuration(proxyBeanMethods = false)
@Import(OrderDesk.class)
class DeskConfiguration {

    @Bean(destroyMethod = "shutdown")
    EmbeddedDatabase dataSource() {
        return new EmbeddedDatabaseBuilder()
                .setType(EmbeddedDatabaseType.H2)
                .generateUniqueName(true)
                .addScript("classpath:dev/idempotency/jdbc/schema-h2.sql")
                .addScript("classpath:dev/idempotency/aspectj/desk-h2.sql")
                .build();
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    CountingStore idempotencyStore(DataSource dataSource) {
        return new CountingStore(JdbcIdempotencyStore.builder(dataSource).build());
    }
}
