package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Retries: an IRREVERSIBLE method is never retried, and a retried method must have declared its tier. The three
 * retry annotations are the stand-ins of {@link Compile}: recognised by their names alone.
 */
class RetryRulesTest {

    private static JavaFileObject payments(String classAnnotation, String methodAnnotations) {
        return source("Payments", """
                package com.example;
                import dev.idempotency.*;
                %s
                public class Payments {
                    %s
                    public String pay(String paymentId) { return paymentId; }
                }
                """.formatted(classAnnotation, methodAnnotations));
    }

    @ParameterizedTest
    @CsvSource({
            "org.springframework.resilience.annotation.Retryable, Retryable",
            "org.springframework.retry.annotation.Retryable, Retryable",
            "io.github.resilience4j.retry.annotation.Retry, Retry"})
    void anIrreversibleMethodCarryingARetryIsRefusedAtTheRetryAnnotation(String annotation, String simple) {
        String use = "@" + annotation + (simple.equals("Retry") ? "(name = \"pay\")" : "");
        JavaFileObject bad = payments("", "@Idempotent(key = \"#paymentId\", tier = Tier.IRREVERSIBLE)\n    " + use);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Payments.pay is IRREVERSIBLE and must not be retried: remove @" + simple
                + " (" + annotation + ") from it, a retry could repeat its side effect; if running it twice is"
                + " harmless, make it REVERSIBLE").inFile(bad).onLineContaining(use);

        JavaFileObject good = payments("", "@Idempotent(key = \"#paymentId\", tier = Tier.REVERSIBLE)\n    " + use);
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    @Test
    void anIrreversibleMethodInARetriedClassIsRefusedAtItsTier() {
        JavaFileObject bad = payments("@org.springframework.retry.annotation.Retryable",
                "@Idempotent(key = \"#paymentId\",\n        tier = Tier.IRREVERSIBLE)");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Payments.pay is IRREVERSIBLE and must not be retried, but its class"
                + " Payments is annotated @Retryable (org.springframework.retry.annotation.Retryable), which retries"
                + " every method: move the retry annotation to the methods that may be retried")
                .inFile(bad).onLineContaining("tier = Tier.IRREVERSIBLE");

        JavaFileObject good = payments("@org.springframework.retry.annotation.Retryable",
                "@Idempotent(key = \"#paymentId\",\n        tier = Tier.REVERSIBLE)");
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    @ParameterizedTest
    @CsvSource({
            "org.springframework.resilience.annotation.Retryable, Retryable",
            "org.springframework.retry.annotation.Retryable, Retryable",
            "io.github.resilience4j.retry.annotation.Retry, Retry"})
    void aRetriedMethodWithoutATierIsRefusedAtTheRetryAnnotation(String annotation, String simple) {
        String use = "@" + annotation + (simple.equals("Retry") ? "(name = \"pay\")" : "");
        JavaFileObject bad = payments("", use);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Payments.pay is retried (@" + simple + ", " + annotation + ") but not"
                + " @Idempotent: a retry after a timeout may run it twice; annotate it @Idempotent(key = \"...\","
                + " tier = ...) with the tier of its side effect (READ_ONLY if it has none)")
                .inFile(bad).onLineContaining(use);
    }

    @Test
    void aReadOnlyMethodMayBeRetried() {
        JavaFileObject good = payments("", "@Idempotent(tier = Tier.READ_ONLY)\n"
                + "    @org.springframework.resilience.annotation.Retryable");
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    @Test
    void everyProxiedMethodOfARetriedClassMustDeclareItsTier() {
        JavaFileObject bad = source("Ledger", """
                package com.example;
                import dev.idempotency.*;
                @io.github.resilience4j.retry.annotation.Retry(name = "ledger")
                public class Ledger {
                    @Idempotent(tier = Tier.READ_ONLY)
                    public long balance(String account) { return 0; }
                    public void post(String entry) { }
                    private void helper() { }
                    static void util() { }
                }
                """);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Ledger.post is retried through its class's @Retry"
                + " (io.github.resilience4j.retry.annotation.Retry) but not @Idempotent")
                .inFile(bad).onLineContaining("public void post(");
    }

    @Test
    void aRetryAnnotationOfAnotherPackageIsNotARetry() {
        JavaFileObject lookalike = source("Retryable", """
                package com.example;
                public @interface Retryable { }
                """);
        JavaFileObject good = payments("", "@Idempotent(key = \"#paymentId\", tier = Tier.IRREVERSIBLE)\n"
                + "    @com.example.Retryable");
        assertThat(compile(good, lookalike)).succeededWithoutWarnings();
    }
}
