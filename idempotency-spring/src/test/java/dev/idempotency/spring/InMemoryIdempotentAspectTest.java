package dev.idempotency.spring;

import dev.idempotency.store.InMemoryIdempotencyStore;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * The aspect on the in-memory store: it never joins the transaction, so the executor defers the result to the
 * caller's commit through {@link SpringTransactionBridge}.
 */
@SpringJUnitConfig(InMemoryIdempotentAspectTest.Config.class)
class InMemoryIdempotentAspectTest extends AbstractIdempotentAspectTest {

    @Configuration(proxyBeanMethods = false)
    @Import(AspectTestConfiguration.class)
    @EnableIdempotency
    static class Config {
        @Bean
        RecordingStore idempotencyStore() {
            return new RecordingStore(new InMemoryIdempotencyStore());
        }
    }
}
