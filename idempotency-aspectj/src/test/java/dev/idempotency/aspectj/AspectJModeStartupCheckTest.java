package dev.idempotency.aspectj;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.OrderService;
import dev.idempotency.store.InMemoryIdempotencyStore;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/** What {@code @EnableIdempotency}'s startup check refuses once weaving is involved: each a guard that would be lost. */
class AspectJModeStartupCheckTest {

    @Configuration(proxyBeanMethods = false)
    static class Base {
        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        DataSource dataSource() {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:startup-check");
            return h2;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class AspectJMode {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class ProxyMode {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(mode = AdviceMode.ASPECTJ)
    static class WovenTransactions {
        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void inAspectJModeAClassTheWeaverMissedFailsTheStartNamingTheMethod() {
        // idempotency-spring's OrderService: compiled by javac, not woven in this run
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Base.class, AspectJMode.class,
                OrderService.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@Idempotent on OrderService.createOrder is never applied:"
                        + " @EnableIdempotency(mode = ASPECTJ) applies it by AspectJ weaving only");
    }

    @Test
    void bothModesInOneContextFailTheStartAMethodMustNotBeGuardedTwice() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Base.class, AspectJMode.class,
                ProxyMode.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@EnableIdempotency is declared in both modes, PROXY and ASPECTJ");
    }

    @Test
    void proxiedIdempotencyAroundAWovenTransactionFailsTheStartTheClaimWouldMissTheTransaction() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(Base.class, ProxyMode.class,
                WovenTransactions.class, OrderDesk.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("OrderDesk.place(String) is @Transactional, and the transaction is woven")
                .hasMessageContaining("Use @EnableIdempotency(mode = ASPECTJ)");
    }
}
