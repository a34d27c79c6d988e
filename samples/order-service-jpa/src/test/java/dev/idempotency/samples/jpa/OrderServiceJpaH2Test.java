package dev.idempotency.samples.jpa;

/** The sample's tests on the embedded H2 of its {@code application.properties}. */
class OrderServiceJpaH2Test extends AbstractOrderServiceJpaTest {
}
