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
import org.junit.jupiter.params.provider.ValueSource;

/** The key: present on writing tiers, valid SpEL, reading only parameters that exist. */
class KeyRulesTest {

    private static JavaFileObject orders(String annotation) {
        return source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    %s
                    public String create(String orderNo, int amount) { return orderNo; }
                }
                """.formatted(annotation));
    }

    @ParameterizedTest
    @ValueSource(strings = {"REVERSIBLE", "IRREVERSIBLE"})
    void aWritingTierWithoutAKeyIsRefusedAtTheAnnotation(String tier) {
        JavaFileObject bad = orders("@Idempotent(tier = Tier." + tier + ")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Orders.create is " + tier + " but its key is blank: set key to a SpEL"
                + " expression over the parameters").inFile(bad).onLineContaining("@Idempotent(");
    }

    @Test
    void aBlankKeyIsRefusedAtTheKey() {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"  \")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorContaining("its key is blank").inFile(bad).onLineContaining("key = \"  \"");
    }

    @Test
    void readOnlyNeedsNoKey() {
        assertThat(compile(orders("@Idempotent(tier = Tier.READ_ONLY)"))).succeededWithoutWarnings();
    }

    @Test
    void aKeyThatIsNotSpelIsRefusedAtTheKey() {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"'ORDER:' + \")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("the key of Orders.create is not a valid SpEL expression:")
                .inFile(bad).onLineContaining("key = \"'ORDER:' + \"");
        assertThat(c).hadErrorContaining("write a SpEL expression over the parameters");
    }

    @Test
    void aKeyNamingAMissingParameterIsRefusedWithTheParametersThatExist() {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"'ORDER:' + #orderNumber\")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("the key of Orders.create refers to #orderNumber, which is not a parameter"
                + " of Orders.create; refer to one of its parameters (#orderNo, #amount)")
                .inFile(bad).onLineContaining("#orderNumber");
    }

    @Test
    void aMissingParameterInsideAMethodCallOrASelectionIsFound() {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n"
                + "        key = \"#root.args.?[#nope != null]\")");
        assertThat(compile(bad)).hadErrorContaining("refers to #nope, which is not a parameter")
                .inFile(bad).onLineContaining("#nope");
        JavaFileObject inner = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"#orderNo.concat(#nope)\")");
        assertThat(compile(inner)).hadErrorContaining("refers to #nope, which is not a parameter")
                .inFile(inner).onLineContaining("#nope");
    }

    @ParameterizedTest
    @ValueSource(strings = {"#p2", "#a2", "#p10"})
    void anIndexBeyondTheParametersIsRefused(String ref) {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"'O:' + " + ref + "\")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        String p = ref.substring(1, 2);
        assertThat(c).hadErrorContaining("the key of Orders.create refers to " + ref + ", but Orders.create takes 2"
                + " (#" + p + "0 to #" + p + "1); refer to an existing parameter")
                .inFile(bad).onLineContaining(ref);
    }

    @Test
    void aMethodWithoutParametersCanOnlyHaveAConstantKey() {
        JavaFileObject bad = source("Jobs", """
                package com.example;
                import dev.idempotency.*;
                public class Jobs {
                    @Idempotent(tier = Tier.REVERSIBLE, key = "#p0")
                    public void migrate() { }
                }
                """);
        assertThat(compile(bad)).hadErrorContaining("refers to #p0, but Jobs.migrate takes no parameters")
                .inFile(bad).onLineContaining("#p0");
        JavaFileObject good = source("Jobs", """
                package com.example;
                import dev.idempotency.*;
                public class Jobs {
                    @Idempotent(tier = Tier.REVERSIBLE, key = "'MIGRATION-42'")
                    public void migrate() { }
                }
                """);
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "'ORDER:' + #orderNo + ':' + #amount",
            "#p0 + #p1",
            "#a0 + ':' + #a1",
            "#root.args[0]",
            "#orderNo.?[#this != null]",
            "#orderNo.toUpperCase() + #amount"})
    void aKeyOverExistingParametersCompiles(String key) {
        assertThat(compile(orders("@Idempotent(tier = Tier.REVERSIBLE, key = \"" + key + "\")")))
                .succeededWithoutWarnings();
    }

    @Test
    void aParameterNamedLikeAnIndexIsFoundByName() {
        JavaFileObject good = source("Odd", """
                package com.example;
                import dev.idempotency.*;
                public class Odd {
                    @Idempotent(tier = Tier.REVERSIBLE, key = "#p7")
                    public void run(String p7) { }
                }
                """);
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    /** What the default run-time KeyResolver refuses at the first call is refused at compile time. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "T(java.lang.String).valueOf(#amount)   | uses a type reference T(...) ('T(java.lang.String)')",
            "new java.lang.StringBuilder(#orderNo)  | uses a constructor (new ...) ('new java.lang.StringBuilder(#orderNo)')",
            "@orders.next() + #orderNo              | uses a bean reference (@name) ('@orders')"})
    void whatTheDefaultResolverRefusesIsRefusedUnlessSpelIsOpen(String key, String message) {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"" + key + "\")");
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("the key of Orders.create " + message + ", which the default KeyResolver"
                + " refuses at run time: key on the parameters and their properties, such as #order.id; or, if the"
                + " application declares a KeyResolver bean that allows it").inFile(bad).onLineContaining("key = ");
        assertThat(c).hadErrorContaining("compile with -Aidempotency.spel=open");
        assertThat(compile(List.of("-Aidempotency.spel=open"), bad)).succeededWithoutWarnings();
    }

    /** Assignment and functions: the run time refuses them whatever KeyResolver is configured. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "#orderNo = 'x'                 | assigns ('#orderNo='x''), which a key expression may never do",
            "#amount++                      | assigns ('#amount++'), which a key expression may never do",
            "--#amount                      | assigns ('--#amount'), which a key expression may never do",
            "#fn(#orderNo)                  | calls the function '#fn(#orderNo)', and a key expression has one"
                    + " function, #parts(...)"})
    void assignmentAndFunctionsAreRefusedEvenWithOpenSpel(String key, String message) {
        JavaFileObject bad = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"" + key + "\")");
        for (List<String> options : List.of(List.<String>of(), List.of("-Aidempotency.spel=open"))) {
            Compilation c = compile(options, bad);
            assertThat(c).hadErrorCount(1);
            assertThat(c).hadErrorContaining("the key of Orders.create " + message).inFile(bad)
                    .onLineContaining("key = ");
        }
    }

    @Test
    void anUnknownSpelOptionIsRefused() {
        assertThat(compile(List.of("-Aidempotency.spel=wide"), orders("@Idempotent(tier = Tier.READ_ONLY)")))
                .hadErrorContaining("-Aidempotency.spel=wide is not understood: use restricted (the default");
    }
}
