package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** compensate: REVERSIBLE only, and it names a method of the class that takes the call's parameters (+ result). */
class CompensateRulesTest {

    private static JavaFileObject holds(String tier, String compensation) {
        return source("Holds", """
                package com.example;
                import dev.idempotency.*;
                import java.util.List;
                public class Holds {
                    public record Hold(String id) { }
                    @Idempotent(key = "#account", tier = Tier.%s,
                            compensate = "release")
                    public Hold place(String account, List<Long> cents) { return new Hold(account); }
                    %s
                }
                """.formatted(tier, compensation));
    }

    @ParameterizedTest
    @ValueSource(strings = {"IRREVERSIBLE", "READ_ONLY"})
    void compensateOnAnotherTierIsRefusedAtCompensate(String tier) {
        JavaFileObject bad = holds(tier, "public void release(String account, List<Long> cents) { }");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("compensate is only for REVERSIBLE operations, but Holds.place is " + tier)
                .inFile(bad).onLineContaining("compensate = \"release\"");
        assertThat(c).hadErrorContaining("remove compensate = \"release\", or make the method REVERSIBLE");
    }

    @Test
    void aMissingCompensationIsRefusedWithTheSignatureToDeclare() {
        JavaFileObject bad = holds("REVERSIBLE", "public void cancel(String account, List<Long> cents) { }");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("compensate = \"release\" of Holds.place names no method of Holds: add"
                + " void release(String account, List<Long> cents) or void release(String account, List<Long>"
                + " cents, Hold result) to Holds, or correct the name")
                .inFile(bad).onLineContaining("compensate = \"release\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "public void release(String account) { }",
            "public void release(String account, List<Long> cents, String result) { }",
            "public void release(List<Long> cents, String account) { }",
            "private void release(String account, List<Long> cents) { }",
            "public static void release(String account, List<Long> cents) { }"})
    void aCompensationThatDoesNotFitIsRefused(String compensation) {
        JavaFileObject bad = holds("REVERSIBLE", compensation);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("compensate = \"release\" of Holds.place does not fit: Holds.release must"
                + " take the parameters of Holds.place, optionally followed by its result, and be neither private"
                + " nor static: declare void release(String account, List<Long> cents)")
                .inFile(bad).onLineContaining("compensate = \"release\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "public void release(String account, List<Long> cents) { }",
            "void release(String account, List<Long> cents, Hold hold) { }",
            "protected void release(String account, List<Long> cents, Object hold) { }",
            "public void release(String a) { } public void release(String a, List<Long> c) { }"})
    void aFittingCompensationCompiles(String compensation) {
        assertThat(compile(holds("REVERSIBLE", compensation))).succeededWithoutWarnings();
    }

    @Test
    void anInheritedCompensationCounts() {
        JavaFileObject base = source("HoldsBase", """
                package com.example;
                public abstract class HoldsBase {
                    public void undo(String account) { }
                }
                """);
        JavaFileObject good = source("Holds", """
                package com.example;
                import dev.idempotency.*;
                public class Holds extends HoldsBase {
                    @Idempotent(key = "#account", tier = Tier.REVERSIBLE, compensate = "undo")
                    public void place(String account) { }
                }
                """);
        assertThat(compile(good, base)).succeededWithoutWarnings();
    }
}
