package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/**
 * Java does not inherit method annotations, and the aspect reads {@code @Idempotent} on the method that runs: on an
 * interface or abstract method, or on a method an override replaces without repeating it, it would protect nothing.
 */
class InheritanceRulesTest {

    @Test
    void anInterfaceMethodIsRefused() {
        JavaFileObject gateway = source("Gateway", """
                package com.example;
                import dev.idempotency.*;
                public interface Gateway {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    String charge(String approvalNo);
                }
                """);
        Compilation c = compile(gateway);
        assertThat(c).hadErrorContaining("@Idempotent on Gateway.charge is never applied: it is an abstract interface"
                + " method, and the annotation is not inherited by the method that implements it, which would run"
                + " unprotected; put @Idempotent on the implementing method instead")
                .inFile(gateway).onLineContaining("@Idempotent(");
    }

    @Test
    void anAbstractMethodIsRefused() {
        JavaFileObject base = source("Base", """
                package com.example;
                import dev.idempotency.*;
                public abstract class Base {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    public abstract String charge(String approvalNo);
                }
                """);
        assertThat(compile(base)).hadErrorContaining("@Idempotent on Base.charge is never applied: it is an abstract"
                + " method, and the annotation is not inherited").inFile(base).onLineContaining("@Idempotent(");
    }

    @Test
    void anOverrideThatDoesNotRepeatTheAnnotationIsRefused() {
        JavaFileObject base = source("Base", """
                package com.example;
                import dev.idempotency.*;
                public class Base {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    public String charge(String approvalNo) { return approvalNo; }
                }
                """);
        JavaFileObject sub = source("Sub", """
                package com.example;
                public class Sub extends Base {
                    @Override
                    public String charge(String approvalNo) { return "sub"; }
                    public String charge(int other) { return "not an override"; }
                    public static class Deeper extends Sub {
                        @Override
                        public String charge(String approvalNo) { return "deeper"; }
                    }
                }
                """);
        Compilation c = compile(base, sub);
        assertThat(c).hadErrorCount(2);
        assertThat(c).hadErrorContaining("Sub.charge overrides Base.charge, which is @Idempotent, without repeating"
                + " the annotation: @Idempotent is not inherited, so a call to Sub.charge would run unprotected;"
                + " annotate Sub.charge with the @Idempotent of Base.charge")
                .inFile(sub).onLineContaining("return \"sub\"");
        assertThat(c).hadErrorContaining("Deeper.charge overrides Base.charge")
                .inFile(sub).onLineContaining("return \"deeper\"");
    }

    @Test
    void anOverrideThatRepeatsTheAnnotationAndADefaultMethodCompile() {
        JavaFileObject base = source("Base", """
                package com.example;
                import dev.idempotency.*;
                public class Base {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    public String charge(String approvalNo) { return approvalNo; }
                }
                """);
        JavaFileObject sub = source("Sub", """
                package com.example;
                import dev.idempotency.*;
                public class Sub extends Base {
                    @Override
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE, operation = "Sub.charge")
                    public String charge(String approvalNo) { return "sub"; }
                }
                """);
        JavaFileObject withDefault = source("Lookups", """
                package com.example;
                import dev.idempotency.*;
                public interface Lookups {
                    @Idempotent(tier = Tier.READ_ONLY)
                    default String find(String id) { return id; }
                }
                """);
        assertThat(compile(base, sub, withDefault)).succeededWithoutWarnings();
    }
}
