package dev.idempotency.samples.jpa;

import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample's tests on PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}), in a schema of their own (other builds share
 * the database), dropped afterwards: skipped without the variable, failed (never skipped) when it is set and the
 * database cannot be reached.
 */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class OrderServiceJpaPostgresIT extends AbstractOrderServiceJpaTest {

    private static final OwnSchema SCHEMA = OwnSchema.postgres(System.getenv("IDEMPOTENCY_POSTGRES_URL"));

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry properties) throws SQLException {
        SCHEMA.create(properties);
    }

    @AfterAll
    static void dropSchema() throws SQLException {
        SCHEMA.drop();
    }
}
