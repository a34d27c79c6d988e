package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.store.InMemoryIdempotencyStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * At their equal default orders, the idempotency advice runs inside {@code @Transactional} whichever of
 * {@code @EnableIdempotency} and {@code @EnableTransactionManagement} comes first: its advisor is defined after every
 * configuration class, so after the transaction advisor.
 */
class AdvisorOrderTest {

    public interface Transfers {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        String inherited(String id);
    }

    public static class BankTransfers implements Transfers {
        @Override
        @Transactional
        public String inherited(String id) {
            return id;
        }

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        @Transactional
        public String direct(String id) {
            return id;
        }
    }

    abstract static class Base {
        @Bean
        RecordingStore store() {
            return new RecordingStore(new InMemoryIdempotencyStore());
        }

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(EmbeddedDatabase dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        BankTransfers transfers() {
            return new BankTransfers();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @EnableTransactionManagement(proxyTargetClass = true)
    static class IdempotencyFirst extends Base {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(proxyTargetClass = true)
    @EnableIdempotency
    static class TransactionsFirst extends Base {
    }

    @ParameterizedTest
    @ValueSource(classes = {IdempotencyFirst.class, TransactionsFirst.class})
    void theClaimIsMadeInsideTheMethodsTransaction(Class<?> configuration) {
        try (var ctx = new AnnotationConfigApplicationContext(configuration)) {
            BankTransfers transfers = ctx.getBean(BankTransfers.class);
            RecordingStore store = ctx.getBean(RecordingStore.class);
            transfers.direct("d-1");
            transfers.inherited("i-1");
            assertThat(store.claimsInTransaction).containsExactly(true, true);
        }
    }
}
