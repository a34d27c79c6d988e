package dev.idempotency.aspectj;

import dev.idempotency.spring.EnableIdempotency;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * Woven idempotency inside Spring's woven {@code @Transactional} ({@code AnnotationTransactionAspect}): the
 * idempotency aspect declares the lower precedence, so it runs inside the transaction on the same method.
 */
@SpringJUnitConfig({DeskConfiguration.class, WovenTransactionsAspectJModeTest.Modes.class})
class WovenTransactionsAspectJModeTest extends AbstractAspectJModeTest {

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(mode = AdviceMode.ASPECTJ)
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class Modes {
    }
}
