package dev.idempotency.aspectj;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.internal.Keys;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.IdempotentAspect;
import dev.idempotency.spring.boot.IdempotencyAutoConfiguration;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Spring Boot application with {@code @EnableIdempotency(mode = ASPECTJ)}: the auto-configuration adds no proxy
 * aspect beside the woven one, and its properties reach the woven aspect.
 */
class BootAspectJModeTest {

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class WovenApplication {
        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        Shop shop() {
            return new Shop();
        }
    }

    @Test
    void theAutoConfigurationLeavesTheAdviceToTheWovenAspectAndConfiguresItWithItsProperties() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                .withUserConfiguration(WovenApplication.class)
                .withPropertyValues("idempotency.default-ttl=3d")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(IdempotentAspect.class)
                            .hasSingleBean(WovenIdempotentAspect.class);
                    Shop shop = context.getBean(Shop.class);

                    assertThat(shop.checkout("C-1")).isEqualTo(shop.checkout("C-1"));
                    assertThat(shop.runs).hasValue(1);

                    IdempotencyRecord r = context.getBean(InMemoryIdempotencyStore.class)
                            .find(Keys.hash("Shop.placeOrder", "", Keys.normalize("ORDER:C-1"))).orElseThrow();
                    assertThat(Duration.between(r.createdAt(), r.expiresAt()))
                            .isBetween(Duration.ofDays(3), Duration.ofDays(3).plusSeconds(5));
                });
        assertThat(WovenIdempotentAspect.isConfigured()).as("released when the context closed").isFalse();
    }
}
