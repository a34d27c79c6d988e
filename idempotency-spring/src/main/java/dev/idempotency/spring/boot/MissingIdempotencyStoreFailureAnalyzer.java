package dev.idempotency.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Tells a Spring Boot user, in the startup failure report, why idempotency has no store and what to do. */
final class MissingIdempotencyStoreFailureAnalyzer extends AbstractFailureAnalyzer<MissingIdempotencyStoreException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, MissingIdempotencyStoreException cause) {
        String description = cause.several()
                ? "@Idempotent methods need one IdempotencyStore, and the application context has several."
                : "@Idempotent methods need an IdempotencyStore, and the application context has none: there is no "
                        + "single DataSource to put the JDBC store on (or idempotency-jdbc-store is not on the class "
                        + "path), and no IdempotencyStore bean.";
        String action = cause.several()
                ? "Mark one IdempotencyStore bean @Primary, or declare your own IdempotentExecutor bean."
                : "Consider one of:\n"
                        + "\t- adding spring-boot-starter-jdbc and dev.idempotency:idempotency-jdbc-store, with a "
                        + "database (a DataSource), for the JDBC store;\n"
                        + "\t- declaring an IdempotencyStore bean (new InMemoryIdempotencyStore() for a test without "
                        + "a database);\n"
                        + "\t- setting idempotency.enabled=false, if @Idempotent methods may run unprotected.";
        return new FailureAnalysis(description, action, cause);
    }
}
