package dev.idempotency.samples.jpa;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/** Every outcome the executor publishes, in order: what ran, what was replayed (and from where), what rolled back. */
@TestConfiguration(proxyBeanMethods = false)
class RecordedOutcomes {

    final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();

    @Bean
    IdempotencyListener recordingListener() {
        return events::add;
    }
}
