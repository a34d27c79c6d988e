package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import java.io.IOException;
import javax.tools.JavaFileObject;
import javax.tools.StandardLocation;
import org.junit.jupiter.api.Test;

/**
 * The aspect finds {@code @Idempotent} on the interface or superclass method that a bean's method implements or
 * overrides (Java itself does not inherit method annotations), so the processor accepts it there, and names the
 * operation after the method that carries it, as the aspect does.
 */
class InheritanceRulesTest {

    @Test
    void anInterfaceMethodCompilesAndNamesTheOperation() throws IOException {
        JavaFileObject gateway = source("Gateway", """
                package com.example;
                import dev.idempotency.*;
                public interface Gateway {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    String charge(String approvalNo);
                    @Idempotent(key = "#approvalNo", tier = Tier.REVERSIBLE, compensate = "release")
                    String hold(String approvalNo);
                }
                """);
        JavaFileObject impl = source("CardGateway", """
                package com.example;
                public class CardGateway implements Gateway {
                    public String charge(String approvalNo) { return approvalNo; }
                    public String hold(String approvalNo) { return approvalNo; }
                    public void release(String approvalNo) { }
                }
                """);
        Compilation c = compile(gateway, impl);
        assertThat(c).succeededWithoutWarnings();
        String json = c.generatedFile(StandardLocation.CLASS_OUTPUT, "META-INF/idempotency/operations.json")
                .orElseThrow().getCharContent(true).toString();
        org.assertj.core.api.Assertions.assertThat(json).contains("\"operation\" : \"Gateway.charge\"")
                .contains("\"operation\" : \"Gateway.hold\"");
    }

    @Test
    void anAbstractMethodAndAnOverrideThatDoesNotRepeatTheAnnotationCompile() {
        JavaFileObject base = source("Base", """
                package com.example;
                import dev.idempotency.*;
                public abstract class Base {
                    @Idempotent(key = "#approvalNo", tier = Tier.IRREVERSIBLE)
                    public abstract String charge(String approvalNo);
                    @Idempotent(key = "#id", tier = Tier.IRREVERSIBLE)
                    public String send(String id) { return id; }
                }
                """);
        JavaFileObject sub = source("Sub", """
                package com.example;
                public class Sub extends Base {
                    @Override
                    public String charge(String approvalNo) { return "sub"; }
                    @Override
                    public String send(String id) { return "sub"; }
                }
                """);
        assertThat(compile(base, sub)).succeededWithoutWarnings();
    }

    @Test
    void aCompensationOnAConcreteMethodIsStillCheckedInItsClass() {
        JavaFileObject bad = source("Holds", """
                package com.example;
                import dev.idempotency.*;
                public class Holds {
                    @Idempotent(key = "#id", tier = Tier.REVERSIBLE, compensate = "release")
                    public String hold(String id) { return id; }
                }
                """);
        assertThat(compile(bad)).hadErrorContaining("compensate = \"release\" of Holds.hold names no method of Holds");
    }
}
