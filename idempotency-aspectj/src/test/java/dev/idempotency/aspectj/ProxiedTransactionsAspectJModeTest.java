package dev.idempotency.aspectj;

import dev.idempotency.spring.EnableIdempotency;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/** Woven idempotency inside a proxied {@code @Transactional}: the proxy is always outside the woven execution. */
@SpringJUnitConfig({DeskConfiguration.class, ProxiedTransactionsAspectJModeTest.Modes.class})
class ProxiedTransactionsAspectJModeTest extends AbstractAspectJModeTest {

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class Modes {
    }
}
