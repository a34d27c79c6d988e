package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A key expression may only read (issue 16, item 7): what would change an argument is refused at compile time. */
class KeyReadsOnlyRulesTest {

    private static JavaFileObject transfers(String key) {
        return source("Transfers", """
                package com.example;
                import dev.idempotency.*;
                import java.util.*;
                public class Transfers {
                    public static class Request {
                        private String id;
                        public String getId() { return id; }
                        public void setId(String id) { this.id = id; }
                        public boolean isUrgent() { return false; }
                        public String rename(String id) { this.id = id; return id; }
                        public List<String> tags = new ArrayList<>();
                    }
                    public record Payee(String iban, Map<String, String> names) { }
                    public enum Kind { SEPA, SWIFT }
                    @Idempotent(tier = Tier.REVERSIBLE,
                            key = "%s")
                    public String send(Request request, List<String> lines, Payee payee, Kind kind, long amount,
                            Object anything) { return "ok"; }
                }
                """.formatted(key));
    }

    @ParameterizedTest
    @ValueSource(strings = {"#request.setId('x') + 'k'", "#lines.clear()", "#p1.add('x')", "#request.rename('x')",
            "#request.tags.clear()", "#payee.names().put('a', 'b')", "#lines.remove(0)",
            "#anything.setFoo('x')", "'k' + #request.getId().concat(#lines.removeFirst())"})
    void aCallThatCouldChangeAnArgumentIsRefusedAtTheKey(String key) {
        JavaFileObject bad = transfers(key);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("the key of Transfers.send calls ").inFile(bad)
                .onLineContaining("key = \"");
        assertThat(c).hadErrorContaining("a key expression may only read");
    }

    @ParameterizedTest
    @ValueSource(strings = {"#request.id", "#request.getId()", "#request.isUrgent() + #request.id",
            "#payee.iban().toUpperCase()", "#payee.names()['x'] + #payee.names().get('y').length()",
            "#lines.size() + ':' + #lines[0]",
            "#lines.get(0).substring(1)", "#kind.name() + #kind.ordinal()", "#amount.toString() + #p4",
            "#request.tags.isEmpty()", "#anything.toString()", "#anything.id()",
            "'T:' + #request.id.trim().toLowerCase()"})
    void gettersAccessorsAndValueMethodsCompile(String key) {
        assertThat(compile(transfers(key))).succeededWithoutWarnings();
    }
}
