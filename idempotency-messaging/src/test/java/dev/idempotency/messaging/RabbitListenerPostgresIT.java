package dev.idempotency.messaging;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The RabbitMQ suite with the store and the listener's writes on PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}). */
@EnabledIfEnvironmentVariable(named = AbstractRabbitListenerIT.URL, matches = ".+")
@EnabledIfEnvironmentVariable(named = Database.POSTGRES_URL, matches = ".+")
class RabbitListenerPostgresIT extends AbstractRabbitListenerIT {

    @Override
    Database database() {
        return Database.postgres();
    }
}
