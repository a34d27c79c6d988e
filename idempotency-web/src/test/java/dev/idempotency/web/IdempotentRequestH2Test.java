package dev.idempotency.web;

import org.junit.jupiter.api.BeforeAll;

/** The header over real HTTP on an embedded H2. */
class IdempotentRequestH2Test extends AbstractIdempotentRequestTest {

    @BeforeAll
    static void startOnH2() {
        server = OrderServer.onH2();
        base = server.base;
        table = server.table;
        orders = server.probe;
    }
}
