package com.example.shop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotencyListener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;

/** A retry with the same approval number gets the first receipt back: one execution, one replay, one record. */
@SpringBootTest
class ShopApplicationTest {

    /** What the library reports of each call (the auto-configured executor picks up every listener bean). */
    @TestConfiguration
    static class Events {
        final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

        @Bean
        IdempotencyListener outcomes() {
            return (IdempotencyEvent event) -> outcomes.add(event.outcome());
        }
    }

    @Autowired
    OrderService orders;

    @Autowired
    Events events;

    @Autowired
    JdbcClient jdbc;

    @Test
    void aRetryIsReplayedNotRunAgain() throws IOException {
        OrderReceipt first = orders.createOrder("AP-1", new OrderRequest("SKU-7", 3));
        OrderReceipt retry = orders.createOrder("AP-1", new OrderRequest("SKU-7", 3));

        assertThat(retry).isEqualTo(first);
        assertThat(orders.executions()).isEqualTo(1);
        long executed = events.outcomes.stream().filter(o -> o == Outcome.EXECUTED).count();
        long replayed = events.outcomes.stream()
                .filter(o -> o == Outcome.REPLAYED || o == Outcome.REPLAYED_CACHED).count();
        assertThat(events.outcomes).hasSize(2);
        assertThat(executed).isEqualTo(1);
        assertThat(replayed).isEqualTo(1);
        // the outcome is in the table the auto-configuration created on the embedded H2
        assertThat(jdbc.sql("SELECT COUNT(*) FROM idempotency_record").query(Long.class).single()).isEqualTo(1L);

        Files.writeString(Path.of("target", "outside-app.txt"), "outside app: starter alone on H2, "
                + orders.executions() + " execution, " + replayed + " replay\n");
    }
}
