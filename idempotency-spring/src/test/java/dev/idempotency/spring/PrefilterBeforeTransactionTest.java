package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A duplicate that the store's pre-filter holds is answered before the method's transaction begins: no transaction,
 * no connection borrowed. Everything the pre-filter does not answer goes into the transaction and is decided there as
 * before; advice ordered outside the transaction advisor still runs on every call.
 */
class PrefilterBeforeTransactionTest {

    public static class Orders {
        private final AtomicInteger runs = new AtomicInteger();

        /** How many times a method body ran (a method: a field read through the class proxy is the proxy's own). */
        public int runs() {
            return runs.get();
        }

        @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
        @Transactional
        public String place(String orderNo, int cents) {
            return "receipt-" + orderNo + "-" + cents + "-" + runs.incrementAndGet();
        }

        @Idempotent(key = "'PLAIN:' + #orderNo", tier = Tier.REVERSIBLE)
        public String placeWithoutTransaction(String orderNo) {
            return "plain-" + orderNo + "-" + runs.incrementAndGet();
        }

        @Idempotent(key = "'JOINED:' + #orderNo", tier = Tier.REVERSIBLE)
        @Transactional(propagation = Propagation.MANDATORY)
        public String placeInCallersTransaction(String orderNo) {
            return "joined-" + orderNo + "-" + runs.incrementAndGet();
        }
    }

    /** Counts the transactions begun. */
    static final class CountingTransactionManager extends DataSourceTransactionManager {
        final AtomicInteger begun = new AtomicInteger();

        CountingTransactionManager(DataSource dataSource) {
            super(dataSource);
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            begun.incrementAndGet();
            super.doBegin(transaction, definition);
        }
    }

    abstract static class Base {
        final List<IdempotencyEvent.Outcome> outcomes = new CopyOnWriteArrayList<>();
        final AtomicInteger outerAdviceCalls = new AtomicInteger();

        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        CountingTransactionManager transactionManager(EmbeddedDatabase dataSource) {
            return new CountingTransactionManager(dataSource);
        }

        @Bean
        IdempotencyListener outcomes() {
            return event -> outcomes.add(event.outcome());
        }

        /** Advice further out than the transaction advisor (a security check, say): it sees every call. */
        @Bean
        DefaultPointcutAdvisor outerAdvice() {
            DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
                    AnnotationMatchingPointcut.forMethodAnnotation(Idempotent.class),
                    (MethodInterceptor) invocation -> {
                        outerAdviceCalls.incrementAndGet();
                        return invocation.proceed();
                    });
            advisor.setOrder(0);
            return advisor;
        }

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @EnableTransactionManagement(proxyTargetClass = true)
    static class WithPrefilter extends Base {
        @Bean
        IdempotencyStore store() {
            return CaffeinePrefilter.wrap(new InMemoryIdempotencyStore()).transactions(SpringTransactionBridge.INSTANCE)
                    .build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @EnableTransactionManagement(proxyTargetClass = true)
    static class WithoutPrefilter extends Base {
        @Bean
        IdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }
    }

    private AnnotationConfigApplicationContext context;

    @AfterEach
    void close() {
        if (context != null) {
            context.close();
        }
    }

    private Orders start(Class<? extends Base> configuration) {
        context = new AnnotationConfigApplicationContext(configuration);
        return context.getBean(Orders.class);
    }

    private CountingTransactionManager transactions() {
        return context.getBean(CountingTransactionManager.class);
    }

    private Base configuration() {
        return context.getBean(Base.class);
    }

    @Test
    void aDuplicateThePrefilterHoldsIsAnsweredWithoutATransaction() {
        Orders orders = start(WithPrefilter.class);

        String first = orders.place("A-1", 1999);
        assertThat(transactions().begun).hasValue(1);

        String again = orders.place("A-1", 1999);
        String third = orders.place("A-1", 1999);

        assertThat(again).isEqualTo(first).isEqualTo(third);
        assertThat(orders.runs()).isEqualTo(1);
        assertThat(transactions().begun).as("transactions begun").hasValue(1);
        assertThat(configuration().outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED_CACHED, IdempotencyEvent.Outcome.REPLAYED_CACHED);
        assertThat(configuration().outerAdviceCalls).as("advice outside the transaction advisor").hasValue(3);
    }

    @Test
    void whatThePrefilterDoesNotAnswerIsDecidedInTheTransaction() {
        Orders orders = start(WithPrefilter.class);
        orders.place("B-1", 1999);

        // a payload mismatch is refused further in, in a transaction, as before
        assertThatThrownBy(() -> orders.place("B-1", 2500)).isInstanceOf(IdempotencyKeyReusedException.class);
        // a new key runs in its own transaction
        orders.place("B-2", 1999);

        assertThat(transactions().begun).hasValue(3);
        assertThat(orders.runs()).isEqualTo(2);
        assertThat(configuration().outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.KEY_REUSED, IdempotencyEvent.Outcome.EXECUTED);
    }

    @Test
    void aMethodWithoutATransactionIsReplayedFromThePrefilterAsBefore() {
        Orders orders = start(WithPrefilter.class);

        String first = orders.placeWithoutTransaction("C-1");
        String again = orders.placeWithoutTransaction("C-1");

        assertThat(again).isEqualTo(first);
        assertThat(orders.runs()).isEqualTo(1);
        assertThat(transactions().begun).hasValue(0);
        assertThat(configuration().outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    @Test
    void aMandatoryTransactionIsStillRequiredOfACallThePrefilterHolds() {
        Orders orders = start(WithPrefilter.class);
        TransactionTemplate inTransaction = new TransactionTemplate(transactions());
        String first = inTransaction.execute(status -> orders.placeInCallersTransaction("E-1"));

        // held by the pre-filter now, but the transaction advice must still refuse a call made without a transaction
        assertThatThrownBy(() -> orders.placeInCallersTransaction("E-1"))
                .isInstanceOf(IllegalTransactionStateException.class);
        String again = inTransaction.execute(status -> orders.placeInCallersTransaction("E-1"));
        assertThat(again).isEqualTo(first);
        assertThat(orders.runs()).isEqualTo(1);
        assertThat(configuration().outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    @Test
    void withoutAPrefilterEveryCallBeginsItsTransaction() {
        Orders orders = start(WithoutPrefilter.class);

        String first = orders.place("D-1", 1999);
        String again = orders.place("D-1", 1999);

        assertThat(again).isEqualTo(first);
        assertThat(transactions().begun).hasValue(2);
        assertThat(configuration().outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED);
    }
}
