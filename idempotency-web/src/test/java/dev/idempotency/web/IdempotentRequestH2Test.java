package dev.idempotency.web;

import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;

/** The header over real HTTP on an embedded H2. */
class IdempotentRequestH2Test extends AbstractIdempotentRequestTest {

    @BeforeAll
    static void startOnH2() {
        start("spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }
}
