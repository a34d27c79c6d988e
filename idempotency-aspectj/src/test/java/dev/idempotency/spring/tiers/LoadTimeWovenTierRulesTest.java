package dev.idempotency.spring.tiers;

import dev.idempotency.spring.EnableIdempotency;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Configuration;

/**
 * idempotency-spring's tier rules (crashed claims, review, compensation, the confirmation gate) on H2, through the
 * aspect woven at load time ({@code @EnableIdempotency(mode = ASPECTJ)}).
 */
class LoadTimeWovenTierRulesTest extends H2SpringTierRulesTest {

    @Override
    protected Class<?> adviceConfiguration() {
        return WovenMode.class;
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class WovenMode {
    }
}
