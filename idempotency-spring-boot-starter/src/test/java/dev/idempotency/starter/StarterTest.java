package dev.idempotency.starter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The starter alone (with a database driver) wires everything; the web part only in a web application. */
class StarterTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    static ConfigurableApplicationContext run(WebApplicationType type) {
        return new SpringApplicationBuilder(App.class).web(type)
                .properties("server.port=0", "idempotency.purge.enabled=false",
                        "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
                .run();
    }

    @Test
    void aWebApplicationGetsTheStoreTheExecutorAndTheHeader() {
        try (ConfigurableApplicationContext context = run(WebApplicationType.SERVLET)) {
            assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
            assertThat(context.getBeansOfType(IdempotentExecutor.class)).hasSize(1);
            assertThat(context.getBeansOfType(IdempotentRequestHandlerAdapter.class)).hasSize(1);
        }
    }

    @Test
    void anApplicationWithoutAWebServerGetsNoHeaderSupport() {
        try (ConfigurableApplicationContext context = run(WebApplicationType.NONE)) {
            assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
            assertThat(context.getBeansOfType(IdempotentRequestHandlerAdapter.class)).isEmpty();
        }
    }
}
