package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import dev.idempotency.internal.UnreplayableTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** A result is recorded and replayed later, in another process: it must be a value, not a live handle. */
class ReturnTypeRulesTest {

    private static JavaFileObject reports(String returnType) {
        String body = switch (returnType) {
            case "void" -> "";
            case "int" -> "return 0;";
            default -> "return null;";
        };
        return source("Reports", """
                package com.example;
                import dev.idempotency.*;
                public class Reports {
                    @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
                    public %s export(String id) { %s }
                }
                """.formatted(returnType, body));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "java.util.stream.Stream<String>          | java.util.stream.Stream<java.lang.String>",
            "java.util.stream.IntStream               | java.util.stream.IntStream",
            "java.util.stream.LongStream              | java.util.stream.LongStream",
            "java.util.stream.DoubleStream            | java.util.stream.DoubleStream",
            "java.util.Iterator<String>               | java.util.Iterator<java.lang.String>",
            "java.util.ListIterator<String>           | java.util.ListIterator<java.lang.String> (a java.util.Iterator)",
            "java.util.Spliterator<String>            | java.util.Spliterator<java.lang.String>",
            "java.io.InputStream                      | java.io.InputStream",
            "java.io.FileInputStream                  | java.io.FileInputStream (a java.io.InputStream)",
            "java.io.OutputStream                     | java.io.OutputStream",
            "java.io.Reader                           | java.io.Reader",
            "java.io.Writer                           | java.io.Writer",
            "java.sql.Connection                      | java.sql.Connection",
            "java.sql.ResultSet                       | java.sql.ResultSet",
            "java.sql.PreparedStatement               | java.sql.PreparedStatement (a java.sql.Statement)",
            "java.nio.channels.FileChannel            | java.nio.channels.FileChannel (a java.nio.channels.Channel)",
            "java.util.concurrent.CompletableFuture<String> | java.util.concurrent.CompletableFuture<java.lang.String> (a java.util.concurrent.CompletionStage)",
            "java.util.concurrent.Future<String>      | java.util.concurrent.Future<java.lang.String>",
            "Thread                                   | java.lang.Thread",
            "java.util.concurrent.Flow.Publisher<String> | java.util.concurrent.Flow$Publisher<java.lang.String>"})
    void aReturnTypeThatCannotBeReplayedIsRefusedAtTheMethod(String declared, String shown) {
        JavaFileObject bad = reports(declared);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        int a = shown.indexOf("(a ");
        String refused = a >= 0 ? shown.substring(a + 3, shown.length() - 1) : shown.replaceAll("<.*", "");
        // the message names types as operations.json does, by binary name (Flow$Publisher)
        assertThat(c).hadErrorContaining("Reports.export returns " + shown + ", which cannot be recorded and"
                + " replayed: " + UnreplayableTypes.all().get(refused) + "; return a materialized value instead (a"
                + " List, a record, a byte[])").inFile(bad).onLineContaining("export(");
    }

    /** Object, and every listed type inside a type argument or an array, as the codec's run-time check refuses them. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "Object                                  | java.lang.Object                                                   | java.lang.Object",
            "Object[]                                | java.lang.Object[], whose java.lang.Object                         | java.lang.Object",
            "java.util.List<Object>                  | java.util.List<java.lang.Object>, whose java.lang.Object           | java.lang.Object",
            "java.util.Map<String, Object>           | java.util.Map<java.lang.String, java.lang.Object>, whose java.lang.Object | java.lang.Object",
            "java.util.List<?>                       | java.util.List<?>, whose ? (a java.lang.Object)                    | java.lang.Object",
            "java.util.Optional<java.util.stream.Stream<String>> | java.util.Optional<java.util.stream.Stream<java.lang.String>>, whose java.util.stream.Stream<java.lang.String> | java.util.stream.Stream",
            "java.util.List<? extends java.io.InputStream> | java.util.List<? extends java.io.InputStream>, whose java.io.InputStream | java.io.InputStream",
            "java.io.Reader[]                        | java.io.Reader[], whose java.io.Reader                             | java.io.Reader"})
    void objectAndEveryListedTypeAreRefusedWhereverTheRunTimeCheckLooks(String declared, String shown,
            String refused) {
        JavaFileObject bad = reports(declared);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(1);
        String reason = refused.equals("java.lang.Object") ? IdempotencyProcessor.OBJECT_REASON
                : UnreplayableTypes.all().get(refused);
        assertThat(c).hadErrorContaining("Reports.export returns " + shown + ", which cannot be recorded and"
                + " replayed: " + reason).inFile(bad).onLineContaining("export(");
    }

    @Test
    void theObjectReasonIsTheCodecsOwn() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> dev.idempotency.codec.JacksonResultCodec.create()
                .checkReplayable(Object.class)).hasMessageContaining(IdempotencyProcessor.OBJECT_REASON);
    }

    @ParameterizedTest
    @ValueSource(strings = {"void", "String", "java.util.List<String>", "java.util.Map<String, Integer>", "byte[]",
            "int", "java.util.Optional<String>", "Iterable<String>", "java.math.BigDecimal",
            "java.util.List<? extends CharSequence>", "String[]", "java.util.Map<String, java.util.List<Long>>"})
    void aValueCompiles(String declared) {
        assertThat(compile(reports(declared))).succeededWithoutWarnings();
    }

    @Test
    void aTypeVariableIsJudgedByItsBound() {
        JavaFileObject bad = source("Files", """
                package com.example;
                import dev.idempotency.*;
                public class Files {
                    @Idempotent(key = "#name", tier = Tier.REVERSIBLE)
                    public <T extends java.io.InputStream> T open(String name) { return null; }
                }
                """);
        assertThat(compile(bad)).hadErrorContaining("Files.open returns T (a java.io.InputStream), which cannot be"
                + " recorded and replayed").inFile(bad).onLineContaining("open(");
        JavaFileObject good = source("Repo", """
                package com.example;
                import dev.idempotency.*;
                public class Repo<E> {
                    @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
                    public E save(String id, E entity) { return entity; }
                    @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
                    public <T> T load(String id) { return null; }
                }
                """);
        assertThat(compile(good)).succeededWithoutWarnings();
    }
}
