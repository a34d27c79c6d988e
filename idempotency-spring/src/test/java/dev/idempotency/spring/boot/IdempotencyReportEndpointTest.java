package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyReport;
import dev.idempotency.spring.boot.IdempotencyAutoConfigurationTest.Greeter;
import dev.idempotency.spring.boot.IdempotencyAutoConfigurationTest.GreeterConfiguration;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The run-time report: counted by the executor, served by the actuator endpoint when the actuator is there. */
class IdempotencyReportEndpointTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withUserConfiguration(GreeterConfiguration.class)
            .withBean(IdempotencyStore.class, InMemoryIdempotencyStore::new);

    @Test
    @SuppressWarnings("unchecked")
    void theEndpointCountsDuplicatesPerOperation() {
        runner.run(context -> {
            Greeter greeter = context.getBean(Greeter.class);
            greeter.greet("K1", "ann");
            greeter.greet("K1", "ann");

            assertThat(context.getBean(IdempotencyReport.Counts.class).of("Greeter.greet"))
                    .containsEntry(dev.idempotency.IdempotencyEvent.Outcome.EXECUTED, 1L);
            IdempotencyReportEndpoint endpoint = context.getBean(IdempotencyReportEndpoint.class);
            Map<String, Object> json = endpoint.report(IdempotencyEndpointResolveTest.OPERATOR);
            assertThat(json).containsKey("operations");
            assertThat(endpoint.format(IdempotencyEndpointResolveTest.OPERATOR, "markdown")).startsWith("# Idempotent operations: the five questions");
        });
    }

    @Test
    void withoutTheActuatorThereIsNoEndpoint() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .run(context -> assertThat(context).doesNotHaveBean(IdempotencyReportEndpoint.class)
                        .hasSingleBean(IdempotencyReport.Counts.class));
    }
}
