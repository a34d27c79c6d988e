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
 * {@code onStoreDown = PROCEED_UNGUARDED} only where a call run without its key can be undone: REVERSIBLE with a
 * compensate. And the ttl warning: a writing operation that keeps its outcome less than a day is warned about,
 * unless it says why with {@code @SuppressWarnings("idempotency:short-ttl")}.
 */
class StoreDownRulesTest {

    private static JavaFileObject carts(String attributes, String suppress) {
        return source("Carts", """
                package com.example;
                import dev.idempotency.*;
                %s
                public class Carts {
                    @Idempotent(key = "#cartId", tier = Tier.%s)
                    public void add(String cartId) { }
                    public void remove(String cartId) { }
                }
                """.formatted(suppress, attributes));
    }

    @Test
    void proceedUnguardedCompilesOnAReversibleMethodWithACompensation() {
        assertThat(compile(carts("REVERSIBLE, compensate = \"remove\",\n            onStoreDown"
                + " = StoreDown.PROCEED_UNGUARDED", ""))).succeededWithoutWarnings();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "IRREVERSIBLE | an IRREVERSIBLE call always fails when the store is down: remove onStoreDown",
            "REVERSIBLE | add compensate = \"<method that undoes one call>\", or remove onStoreDown"})
    void proceedUnguardedIsRefusedWhereADuplicateCouldNotBeUndone(String tier, String fix) {
        JavaFileObject bad = carts(tier + ",\n            onStoreDown = StoreDown.PROCEED_UNGUARDED", "");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Carts.add declares onStoreDown = PROCEED_UNGUARDED, which needs tier ="
                + " REVERSIBLE and a compensate").inFile(bad).onLineContaining("onStoreDown = ");
        assertThat(c).hadErrorContaining(fix);
    }

    @Test
    void aWritingOperationWithATtlUnderADayIsWarnedAboutNotRefused() {
        JavaFileObject shortTtl = carts("REVERSIBLE,\n            ttl = \"15m\"", "");
        Compilation c = compile(shortTtl);
        assertThat(c).succeeded();
        assertThat(c).hadWarningCount(1);
        assertThat(c).hadWarningContaining("Carts.add keeps its outcome for ttl = \"15m\", less than 24 hours")
                .inFile(shortTtl).onLineContaining("ttl = ");
        assertThat(c).hadWarningContaining("@SuppressWarnings(\"idempotency:short-ttl\")");
    }

    @Test
    void aShortTtlWithAReasonOnTheMethodOrItsClassCompilesWithoutWarnings() {
        assertThat(compile(source("Carts", """
                package com.example;
                import dev.idempotency.*;
                public class Carts {
                    @SuppressWarnings("idempotency:short-ttl") // only guards a burst of double clicks
                    @Idempotent(key = "#cartId", tier = Tier.REVERSIBLE, ttl = "15m")
                    public void add(String cartId) { }
                }
                """))).succeededWithoutWarnings();
        assertThat(compile(carts("IRREVERSIBLE, ttl = \"1h\"", "@SuppressWarnings(\"idempotency:short-ttl\")")))
                .succeededWithoutWarnings();
    }

    @Test
    void aDayOrMoreAndReadOnlyMethodsAreNotWarnedAbout() {
        assertThat(compile(carts("REVERSIBLE, ttl = \"24h\"", ""))).succeededWithoutWarnings();
        assertThat(compile(carts("IRREVERSIBLE, ttl = \"P7D\"", ""))).succeededWithoutWarnings();
        assertThat(compile(source("Catalog", """
                package com.example;
                import dev.idempotency.*;
                public class Catalog {
                    @Idempotent(tier = Tier.READ_ONLY, ttl = "1m")
                    public String price(String sku) { return sku; }
                }
                """))).succeededWithoutWarnings();
    }
}
