package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.spring.boot.IdempotencyAutoConfigurationTest.Greeter;
import dev.idempotency.spring.boot.IdempotencyAutoConfigurationTest.GreeterConfiguration;
import dev.idempotency.store.CircuitOpenException;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** idempotency.circuit-breaker.*: the store the executor uses is wrapped in a breaker, under the pre-filter. */
class CircuitBreakerAutoConfigurationTest {

    private final AtomicInteger asked = new AtomicInteger();
    private volatile boolean down;
    private final IdempotencyStore memory = new InMemoryIdempotencyStore();
    /** The application's store: refuses every call while down, as a database that refuses connections. */
    private final IdempotencyStore store = (IdempotencyStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return method.invoke(memory, args);
                }
                asked.incrementAndGet();
                if (down) {
                    throw new IllegalStateException("Connection refused");
                }
                try {
                    return method.invoke(memory, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withUserConfiguration(GreeterConfiguration.class)
            .withBean(IdempotencyStore.class, () -> store)
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

    @Test
    void aStoreThatKeepsFailingIsGivenUpOnAndMetered() {
        runner.withPropertyValues("idempotency.circuit-breaker.failure-threshold=3",
                "idempotency.circuit-breaker.open-for=1h").run(context -> {
                    Greeter greeter = context.getBean(Greeter.class);
                    down = true;
                    for (int i = 0; i < 3; i++) {
                        assertThatThrownBy(() -> greeter.greet("K1", "ann"))
                                .isInstanceOf(IdempotencyStoreException.class);
                    }
                    int before = asked.get();
                    assertThatThrownBy(() -> greeter.greet("K1", "ann"))
                            .isInstanceOf(IdempotencyStoreException.class)
                            .hasCauseInstanceOf(CircuitOpenException.class);
                    assertThat(asked).hasValue(before);
                    assertThat(greeter.runs()).isZero();
                    assertThat(context.getBean(MeterRegistry.class).get("idempotency.store.circuit.state").gauge()
                            .value()).isEqualTo(2.0);
                    assertThat(context.getBean("idempotencyStoreFront").toString())
                            .contains("circuit breaker (failure-threshold 3, open-for PT1H)");
                });
    }

    @Test
    void turnedOffEveryCallAsksTheStore() {
        runner.withPropertyValues("idempotency.circuit-breaker.enabled=false").run(context -> {
            Greeter greeter = context.getBean(Greeter.class);
            down = true;
            for (int i = 0; i < 10; i++) {
                assertThatThrownBy(() -> greeter.greet("K1", "ann")).isInstanceOf(IdempotencyStoreException.class)
                        .hasNoSuppressedExceptions().cause().isNotInstanceOf(CircuitOpenException.class);
            }
            assertThat(asked).hasValue(10);
        });
    }
}
