package dev.idempotency.web;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The header over real HTTP on PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}); an unreachable database fails it. */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class IdempotentRequestPostgresIT extends AbstractIdempotentRequestTest {

    @BeforeAll
    static void startOnPostgres() {
        start("spring.datasource.url=" + System.getenv("IDEMPOTENCY_POSTGRES_URL"));
    }
}
