package dev.idempotency.spring.boot;

import javax.sql.DataSource;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_MARIADB_URL", matches = ".+")
class MariaDbAutoConfigurationIT extends AbstractAutoConfigurationDatabaseIT {

    @Override
    DataSource dataSource() {
        return fromUrl(new org.mariadb.jdbc.Driver(), System.getenv("IDEMPOTENCY_MARIADB_URL"));
    }
}
