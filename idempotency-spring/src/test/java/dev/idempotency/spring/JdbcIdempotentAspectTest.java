package dev.idempotency.spring;

import dev.idempotency.jdbc.JdbcIdempotencyStore;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * The aspect on the JDBC store over H2, on the same {@code DataSource} as the business writes: the claim and the
 * result are written in the caller's transaction, and a concurrent duplicate waits on the uncommitted row.
 */
@SpringJUnitConfig(JdbcIdempotentAspectTest.Config.class)
class JdbcIdempotentAspectTest extends AbstractIdempotentAspectTest {

    @Configuration(proxyBeanMethods = false)
    @Import({AspectTestConfiguration.class, JdbcStore.class})
    @EnableIdempotency
    static class Config {
    }

    /** The JDBC store on the business {@code DataSource}, whatever way the advice is applied. */
    @Configuration(proxyBeanMethods = false)
    static class JdbcStore {
        @Bean
        RecordingStore idempotencyStore(DataSource dataSource) {
            // the schema script the JDBC store ships, as users are told to run it
            new ResourceDatabasePopulator(new ClassPathResource("dev/idempotency/jdbc/schema-h2.sql"))
                    .execute(dataSource);
            return new RecordingStore(JdbcIdempotencyStore.builder(dataSource).build());
        }
    }
}
