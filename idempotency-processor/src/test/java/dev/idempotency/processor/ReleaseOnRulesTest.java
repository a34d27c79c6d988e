package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code releaseOn} and {@code lease}: what an irreversible call may release, and how long a claim lives. */
class ReleaseOnRulesTest {

    private static JavaFileObject payments(String tier, String releaseOn) {
        return source("Payments", """
                package com.example;
                import dev.idempotency.*;
                public class Payments {
                    public static class GatewayRefused extends RuntimeException { private static final long serialVersionUID = 1L; }
                    @Idempotent(key = "#id", tier = Tier.%s,
                            releaseOn = %s)
                    public void pay(String id) { }
                }
                """.formatted(tier, releaseOn));
    }

    @Test
    void anIrreversibleCallMayReleaseOnExceptionsThatMeanNothingHappened() {
        assertThat(compile(payments("IRREVERSIBLE", "GatewayRefused.class"))).succeededWithoutWarnings();
        assertThat(compile(payments("IRREVERSIBLE", "{}"))).succeededWithoutWarnings();
    }

    @Test
    void releaseOnOnAnotherTierIsRefused() {
        JavaFileObject bad = payments("REVERSIBLE", "GatewayRefused.class");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("releaseOn is only for IRREVERSIBLE operations, but Payments.pay is"
                + " REVERSIBLE").inFile(bad).onLineContaining("releaseOn = ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Exception.class", "RuntimeException.class", "Throwable.class", "Error.class",
            "{GatewayRefused.class, RuntimeException.class}"})
    void aClassAsBroadAsExceptionIsRefused(String listed) {
        JavaFileObject bad = payments("IRREVERSIBLE", listed);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("which is too broad: a timeout or a lost connection")
                .inFile(bad).onLineContaining("releaseOn = ");
    }

    private static JavaFileObject orders(String lease) {
        return source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE,
                            lease = "%s")
                    public void create(String orderNo) { }
                }
                """.formatted(lease));
    }

    @Test
    void aLeaseParsesAsEveryDuration() {
        assertThat(compile(orders("2m"))).succeededWithoutWarnings();
        JavaFileObject bad = orders("2 minutes");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("lease of Orders.create: '2 minutes' is not a duration")
                .inFile(bad).onLineContaining("lease = ");
    }
}
