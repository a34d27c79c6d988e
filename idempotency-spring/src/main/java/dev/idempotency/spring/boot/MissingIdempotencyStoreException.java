package dev.idempotency.spring.boot;

/**
 * The auto-configured executor found no single {@code IdempotencyStore} bean to work on. Spring Boot explains it
 * with {@link MissingIdempotencyStoreFailureAnalyzer}.
 */
final class MissingIdempotencyStoreException extends IllegalStateException {

    private final boolean several;

    MissingIdempotencyStoreException(boolean several) {
        super("Idempotency needs exactly one IdempotencyStore bean, and there " + (several ? "are several" : "is none")
                + ": add a DataSource (spring-boot-starter-jdbc) and idempotency-jdbc-store for the JDBC store, or "
                + "declare an IdempotencyStore bean (mark one @Primary if there are several), or set "
                + "idempotency.enabled=false");
        this.several = several;
    }

    boolean several() {
        return several;
    }
}
