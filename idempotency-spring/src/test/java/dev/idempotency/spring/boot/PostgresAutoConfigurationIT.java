package dev.idempotency.spring.boot;

import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class PostgresAutoConfigurationIT extends AbstractAutoConfigurationDatabaseIT {

    @Override
    DataSource dataSource() {
        return fromUrl(new org.postgresql.Driver(), System.getenv("IDEMPOTENCY_POSTGRES_URL"));
    }
}
