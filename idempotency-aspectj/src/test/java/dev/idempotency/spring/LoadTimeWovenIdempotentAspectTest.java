package dev.idempotency.spring;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * idempotency-spring's aspect suite, on the JDBC store, with {@code @EnableIdempotency(mode = ASPECTJ)}: its service
 * classes are woven when loaded (the {@code -javaagent} of this module's second test run, and META-INF/aop.xml), and
 * no proxy applies the advice.
 */
@SpringJUnitConfig(LoadTimeWovenIdempotentAspectTest.Config.class)
class LoadTimeWovenIdempotentAspectTest extends AbstractIdempotentAspectTest {

    @Override
    protected boolean proxied() {
        return false;
    }

    @Configuration(proxyBeanMethods = false)
    @Import({AspectTestConfiguration.class, JdbcIdempotentAspectTest.JdbcStore.class})
    @EnableIdempotency(mode = AdviceMode.ASPECTJ)
    static class Config {
    }
}
