package dev.idempotency.messaging;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The RabbitMQ suite with the store and the listener's writes on an embedded H2. */
@EnabledIfEnvironmentVariable(named = AbstractRabbitListenerIT.URL, matches = ".+")
class RabbitListenerH2IT extends AbstractRabbitListenerIT {

    @Override
    Database database() {
        return Database.h2();
    }
}
