package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** ttl and lockTimeout parse at compile time exactly as at run time (the same {@code Durations}). */
class DurationRulesTest {

    private static JavaFileObject orders(String element, String value) {
        return source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#orderNo", tier = Tier.REVERSIBLE,
                            %s = "%s")
                    public void create(String orderNo) { }
                }
                """.formatted(element, value));
    }

    @ParameterizedTest
    @CsvSource({
            "ttl, 24 hours, is not a duration; write 500ms, 30s, 15m, 24h, 7d or ISO-8601 such as PT24H",
            "ttl, 0s, must be a positive duration",
            "ttl, PT-1H, must be a positive duration",
            "lockTimeout, 10sec, is not a duration; write 500ms, 30s, 15m, 24h, 7d or ISO-8601 such as PT24H",
            "lockTimeout, '', is not a duration"})
    void aDurationThatDoesNotParseIsRefusedAtTheElement(String element, String value, String problem) {
        JavaFileObject bad = orders(element, value);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining(element + " of Orders.create: '" + value + "' " + problem)
                .inFile(bad).onLineContaining(element + " = ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"500ms", "30s", "15m", "24h", "7d", "PT24H", "P7D"})
    void everyDocumentedFormParses(String value) {
        // a ttl under a day parses and compiles, with the short-ttl warning (StoreDownRulesTest)
        assertThat(compile(orders("ttl", value))).succeeded();
        assertThat(compile(orders("lockTimeout", value))).succeededWithoutWarnings();
    }
}
