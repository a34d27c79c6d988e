package dev.idempotency.samples.jpa;

import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample's tests on MariaDB ({@code IDEMPOTENCY_MARIADB_URL}), in a database of their own (other builds share the
 * server), dropped afterwards: skipped without the variable, failed (never skipped) when it is set and the server
 * cannot be reached.
 */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_MARIADB_URL", matches = ".+")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class OrderServiceJpaMariaDbIT extends AbstractOrderServiceJpaTest {

    private static final OwnSchema SCHEMA = OwnSchema.mariadb(System.getenv("IDEMPOTENCY_MARIADB_URL"));

    @DynamicPropertySource
    static void mariadb(DynamicPropertyRegistry properties) throws SQLException {
        SCHEMA.create(properties);
    }

    @AfterAll
    static void dropSchema() throws SQLException {
        SCHEMA.drop();
    }
}
