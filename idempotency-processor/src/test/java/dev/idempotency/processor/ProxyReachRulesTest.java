package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import java.util.List;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where a Spring proxy cannot reach, @Idempotent would silently do nothing; AspectJ weaving reaches everywhere. */
class ProxyReachRulesTest {

    private static final List<String> ASPECTJ = List.of("-Aidempotency.weaving=aspectj");

    private static JavaFileObject orders(String classModifiers, String methodModifiers) {
        return source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public %s class Orders {
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
                    %s String create(String orderNo) { return orderNo; }
                }
                """.formatted(classModifiers, methodModifiers));
    }

    @ParameterizedTest
    @CsvSource({
            "private, a Spring proxy cannot intercept a private method; make it public and call it through the bean",
            "public static, a Spring proxy cannot intercept a static method; make it an instance method of a bean",
            "public final, a Spring proxy cannot override a final method; remove final"})
    void anUnreachableMethodIsRefusedAtTheMethod(String modifiers, String problem) {
        JavaFileObject bad = orders("", modifiers);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("@Idempotent on Orders.create is never applied: " + problem
                + "; or, if AspectJ weaving applies the advice, compile with -Aidempotency.weaving=aspectj")
                .inFile(bad).onLineContaining("String create(");

        assertThat(compile(ASPECTJ, bad)).succeededWithoutWarnings();
    }

    @Test
    void aFinalClassIsRefusedOnceAtTheClass() {
        JavaFileObject bad = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public final class Orders {
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
                    public String create(String orderNo) { return orderNo; }
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
                    public String cancel(String orderNo) { return orderNo; }
                }
                """);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("@Idempotent on Orders.create is never applied: class Orders is final and"
                + " a Spring proxy must subclass it; make it a non-final class; or, if AspectJ weaving applies the"
                + " advice, compile with -Aidempotency.weaving=aspectj")
                .inFile(bad).onLineContaining("public final class Orders");

        assertThat(compile(ASPECTJ, bad)).succeededWithoutWarnings();
    }

    @Test
    void aRecordIsAFinalClass() {
        JavaFileObject bad = source("Order", """
                package com.example;
                import dev.idempotency.*;
                public record Order(String no) {
                    @Idempotent(key = "#p0", tier = Tier.REVERSIBLE)
                    public String ship(String carrier) { return carrier; }
                }
                """);
        assertThat(compile(bad)).hadErrorContaining("class Order is final (a record)")
                .inFile(bad).onLineContaining("public record Order");
    }

    @Test
    void publicProtectedAndPackagePrivateMethodsOfAnOpenClassCompile() {
        assertThat(compile(orders("", "public"))).succeededWithoutWarnings();
        assertThat(compile(orders("", "protected"))).succeededWithoutWarnings();
        assertThat(compile(orders("", ""))).succeededWithoutWarnings();
        assertThat(compile(orders("abstract", "public"))).succeededWithoutWarnings();
    }

    @Test
    void interfaceMethodsCompile() {
        JavaFileObject good = source("OrderApi", """
                package com.example;
                import dev.idempotency.*;
                public interface OrderApi {
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
                    String create(String orderNo);
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE)
                    default String cancel(String orderNo) { return orderNo; }
                }
                """);
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    @Test
    void theAspectjOptionRelaxesOnlyReachabilityAndAnUnknownValueIsRefused() {
        JavaFileObject bad = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public final class Orders {
                    @Idempotent(tier = Tier.REVERSIBLE)
                    private static String create(String orderNo) { return orderNo; }
                }
                """);
        Compilation woven = compile(ASPECTJ, bad);
        assertThat(woven).hadErrorCount(1);
        assertThat(woven).hadErrorContaining("Orders.create is REVERSIBLE but its key is blank");

        Compilation proxied = compile(List.of("-Aidempotency.weaving=proxy"), bad);
        assertThat(proxied).hadErrorCount(3);

        Compilation typo = compile(List.of("-Aidempotency.weaving=aspect-j"), orders("", "public"));
        assertThat(typo).hadErrorContaining("-Aidempotency.weaving=aspect-j is not understood: use proxy (the"
                + " default, a Spring proxy applies @Idempotent) or aspectj (AspectJ weaving applies it)");
    }
}
