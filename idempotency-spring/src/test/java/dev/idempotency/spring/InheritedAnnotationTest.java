package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Java does not inherit method annotations; the aspect finds {@code @Idempotent} on the interface method a bean
 * implements, or on the superclass method it overrides, so that the implementation is protected all the same.
 */
class InheritedAnnotationTest {

    public interface Charges {
        @Idempotent(key = "'CHARGE:' + #id", tier = Tier.IRREVERSIBLE)
        String charge(String id);
    }

    public static class CardCharges implements Charges {
        final AtomicInteger runs = new AtomicInteger();

        @Override
        public String charge(String chargeId) { // renamed: the key still names the interface's parameter
            return "charged " + chargeId + " #" + runs.incrementAndGet();
        }
    }

    public static class BaseTransfers {
        @Idempotent(key = "'SEND:' + #id", tier = Tier.IRREVERSIBLE)
        public String send(String id) {
            return "base";
        }
    }

    public static class WireTransfers extends BaseTransfers {
        final AtomicInteger runs = new AtomicInteger();

        @Override
        public String send(String id) {
            return "sent " + id + " #" + runs.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class Config {
        static final InMemoryIdempotencyStore STORE = new InMemoryIdempotencyStore();

        @Bean
        InMemoryIdempotencyStore store() {
            return STORE;
        }

        @Bean
        CardCharges charges() {
            return new CardCharges();
        }

        @Bean
        WireTransfers transfers() {
            return new WireTransfers();
        }
    }

    @Test
    void anInterfaceMethodsAnnotationProtectsTheImplementationThroughAnInterfaceProxy() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            Charges charges = ctx.getBean(Charges.class);
            assertThat(AopUtils.isJdkDynamicProxy(charges)).isTrue();
            assertThat(charges.charge("c-1")).isEqualTo("charged c-1 #1");
            assertThat(charges.charge("c-1")).isEqualTo("charged c-1 #1");
            assertThat(((CardCharges) AopProxyUtils.getSingletonTarget(charges)).runs).hasValue(1);
            // named after the method that carries the annotation, as the processor's operations.json names it
            assertThat(Config.STORE.find(Keys.hash("Charges.charge", "", "CHARGE:c-1"))).isPresent();
        }
    }

    @Test
    void aSuperclassMethodsAnnotationProtectsAnOverrideThatDoesNotRepeatIt() {
        try (var ctx = new AnnotationConfigApplicationContext(Config.class)) {
            WireTransfers transfers = ctx.getBean(WireTransfers.class);
            assertThat(AopUtils.isCglibProxy(transfers)).isTrue();
            assertThat(transfers.send("t-1")).isEqualTo("sent t-1 #1");
            assertThat(transfers.send("t-1")).isEqualTo("sent t-1 #1");
            assertThat(((WireTransfers) AopProxyUtils.getSingletonTarget(transfers)).runs).hasValue(1);
            assertThat(Config.STORE.find(Keys.hash("BaseTransfers.send", "", "SEND:t-1"))).isPresent();
        }
    }
}
