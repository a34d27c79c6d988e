package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import java.util.List;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/**
 * A key that joins two free-text values with {@code +} is ambiguous ({@code 'A:' + #a + ':' + #b} is one key for
 * ({@code x:y}, {@code z}) and ({@code x}, {@code y:z})): a warning, which {@code #parts(...)} answers, and which
 * {@code @SuppressWarnings("idempotency:key-concatenation")} silences where the values cannot hold the separator.
 */
class KeyConcatenationRulesTest {

    private static JavaFileObject orders(String annotations, String parameters) {
        return source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    %s
                    public String create(%s) { return "done"; }
                }
                """.formatted(annotations, parameters));
    }

    @Test
    void joiningTwoStringParametersIsAWarningAtTheKey() {
        JavaFileObject joined = orders("@Idempotent(tier = Tier.REVERSIBLE,\n"
                + "        key = \"'A:' + #a + ':' + #b\")", "String a, String b");
        Compilation c = compile(joined);
        assertThat(c).succeeded();
        assertThat(c).hadWarningCount(1);
        assertThat(c).hadWarningContaining("the key of Orders.create joins the free-text values #a and #b with +,"
                + " so two different calls can give one key (as 'x:y' + ':' + 'z' and 'x' + ':' + 'y:z' do): make"
                + " each value a part of #parts(...), which escapes them, such as key = \"#parts('A', #a, #b)\"")
                .inFile(joined).onLineContaining("key = ");
        assertThat(c).hadWarningContaining("@SuppressWarnings(\"idempotency:key-concatenation\")");
    }

    @Test
    void thePartsFunctionIsNotWarnedAbout() {
        assertThat(compile(orders("@Idempotent(tier = Tier.REVERSIBLE, key = \"#parts('A', #a, #b)\")",
                "String a, String b"))).succeededWithoutWarnings();
    }

    @Test
    void oneStringAndANumberCannotRunIntoEachOther() {
        assertThat(compile(orders("@Idempotent(tier = Tier.REVERSIBLE, key = \"#orderId + ':' + #lineNo\")",
                "String orderId, long lineNo"))).succeededWithoutWarnings();
    }

    @Test
    void charSequencesPositionalReadsAndStringPropertiesAreFreeTextToo() {
        Compilation c = compile(source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    public record Order(String customer, long no) { }
                    @Idempotent(tier = Tier.REVERSIBLE, key = "#p0 + '/' + #order.customer")
                    public String create(CharSequence region, Order order) { return "done"; }
                }
                """));
        assertThat(c).hadWarningContaining("joins the free-text values #p0 and #order.customer with +");
    }

    @Test
    void aHeaderAndAMessageIdAreFreeText() {
        JavaFileObject listener = orders("@Idempotent(tier = Tier.REVERSIBLE,\n"
                + "        key = \"#headers['tenant'] + ':' + #messageId\")",
                "java.util.Map<String, Object> headers, String messageId");
        assertThat(compile(listener)).hadWarningContaining(
                "joins the free-text values #headers['tenant'] and #messageId with +");
    }

    @Test
    void theWarningIsSuppressedOnTheMethodOrItsClass() {
        assertThat(compile(orders("@Idempotent(tier = Tier.REVERSIBLE, key = \"'A:' + #a + ':' + #b\")\n"
                + "    @SuppressWarnings(\"idempotency:key-concatenation\")", "String a, String b")))
                .succeededWithoutWarnings();
        assertThat(compile(List.of("-Werror"), source("Orders", """
                package com.example;
                import dev.idempotency.*;
                @SuppressWarnings("idempotency:key-concatenation")
                public class Orders {
                    @Idempotent(tier = Tier.REVERSIBLE, key = "'A:' + #a + ':' + #b")
                    public String create(String a, String b) { return "done"; }
                }
                """))).succeededWithoutWarnings();
    }

    @Test
    void aParameterNamedPartsThatHidesTheFunctionIsAnError() {
        JavaFileObject hidden = orders("@Idempotent(tier = Tier.REVERSIBLE,\n        key = \"#parts('A', #a)\")",
                "String a, String parts");
        Compilation c = compile(hidden);
        assertThat(c).hadErrorContaining("the key of Orders.create calls #parts(...), the key function, but a"
                + " parameter named parts hides it: rename the parameter").inFile(hidden).onLineContaining("key = ");
    }
}
