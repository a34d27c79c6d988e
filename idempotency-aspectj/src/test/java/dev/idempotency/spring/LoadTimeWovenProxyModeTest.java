package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * idempotency-spring's aspect suite in the default proxy mode, while its service classes are also woven at load time
 * (the aspect's META-INF/aop.xml is on the class path of every application that has idempotency-aspectj, and a weaving
 * agent may be running): each call is still guarded once, by the proxy.
 */
@SpringJUnitConfig(JdbcIdempotentAspectTest.Config.class)
class LoadTimeWovenProxyModeTest extends AbstractIdempotentAspectTest {

    @Test
    void theServiceClassesAreWovenAsWellAsProxied() {
        assertThat(IdempotencyStartupCheck.woven(OrderService.class)).isTrue();
        assertThat(org.springframework.aop.support.AopUtils.isCglibProxy(orders)).isTrue();
    }
}
