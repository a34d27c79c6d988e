package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import java.util.List;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/** With -Aidempotency.weaving=aspectj, what the woven aspect cannot apply is refused instead of what a proxy cannot. */
class WeavingRulesTest {

    private static final List<String> ASPECTJ = List.of("-Aidempotency.weaving=aspectj");

    @Test
    void anAnnotatedInterfaceMethodIsRefusedUnderWeavingOnlyTheWeaverGuardsTheMethodThatRuns() {
        JavaFileObject gateway = source("Gateway", """
                package com.example;
                import dev.idempotency.*;
                public interface Gateway {
                    @Idempotent(key = "#paymentId", tier = Tier.REVERSIBLE)
                    String pay(String paymentId);
                }
                """);

        Compilation woven = compile(ASPECTJ, gateway);
        assertThat(woven).hadErrorCount(1);
        assertThat(woven).hadErrorContaining("@Idempotent on Gateway.pay is never applied by AspectJ weaving")
                .inFile(gateway).onLineContaining("String pay(");
        assertThat(compile(gateway)).succeededWithoutWarnings();
    }

    @Test
    void aReadOnlyInterfaceMethodIsNeverAdvisedAndNotRefused() {
        JavaFileObject catalog = source("Catalog", """
                package com.example;
                import dev.idempotency.*;
                public interface Catalog {
                    @Idempotent(tier = Tier.READ_ONLY)
                    String find(String sku);
                }
                """);

        assertThat(compile(ASPECTJ, catalog)).succeededWithoutWarnings();
    }

    @Test
    void aStaticMethodWithACompensationIsRefusedItHasNoObjectToUndoOn() {
        JavaFileObject invoices = source("Invoices", """
                package com.example;
                import dev.idempotency.*;
                public class Invoices {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE, compensate = "cancel")
                    static String issue(String no) { return no; }
                    static void cancel(String no) { }
                }
                """);

        Compilation woven = compile(ASPECTJ, invoices);
        assertThat(woven).hadErrorContaining("Invoices.issue is static and declares compensate = \"cancel\"")
                .inFile(invoices).onLineContaining("String issue(");
    }

    @Test
    void privateAndStaticMethodsWithoutCompensationAreWovenAndAccepted() {
        JavaFileObject orders = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    public String checkout(String no) { return place(no) + invoice(no); }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    private String place(String no) { return no; }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    static String invoice(String no) { return no; }
                }
                """);

        assertThat(compile(ASPECTJ, orders)).succeededWithoutWarnings();
    }
}
