package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.testing.compile.Compilation;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.Tier;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The side-effect inventory: every idempotent operation of a compilation, sorted by name. */
class OperationsJsonTest {

    private static final JavaFileObject ORDERS = source("shop.Orders", """
            package com.example.shop;
            import dev.idempotency.*;
            import java.util.List;
            public class Orders {
                public record Receipt(String no) { }
                @Idempotent(key = "'APPROVAL:' + #approvalNo + ':MAIN'", tier = Tier.REVERSIBLE, ttl = "7d",
                        compensate = "cancel")
                public Receipt create(String approvalNo, List<Long> lines, @IdempotencyIgnore String trace) {
                    return new Receipt(approvalNo);
                }
                public void cancel(String approvalNo, List<Long> lines, String trace, Receipt receipt) { }
                @Idempotent(tier = Tier.READ_ONLY)
                public List<Receipt> list(int[] ids) { return List.of(); }
            }
            """);
    private static final JavaFileObject PAYMENTS = source("Payments", """
            package com.example;
            import dev.idempotency.*;
            public class Payments {
                public static class Gateway {
                    @Idempotent(key = "#p0", tier = Tier.IRREVERSIBLE, operation = " payments.send ",
                            lockTimeout = "30s")
                    public void send(String "quoted\\\\id", Gateway.Nested[] nested) { }
                    public static class Nested { }
                }
            }
            """.replace("String \"quoted\\\\id\"", "String transferId"));

    @Test
    void listsEveryOperationSortedByNameWithItsTierKeyTtlAndCompensation() throws IOException {
        Compilation c = compile(ORDERS, PAYMENTS);
        assertThat(c).succeededWithoutWarnings();
        assertThat(json(c)).isEqualTo("""
                {
                  "format" : 1,
                  "operations" : [
                    {
                      "operation" : "Orders.create",
                      "class" : "com.example.shop.Orders",
                      "method" : "create",
                      "parameterTypes" : [
                        "java.lang.String",
                        "java.util.List",
                        "java.lang.String"
                      ],
                      "returnType" : "com.example.shop.Orders$Receipt",
                      "tier" : "REVERSIBLE",
                      "key" : "'APPROVAL:' + #approvalNo + ':MAIN'",
                      "ttl" : "7d",
                      "compensate" : "cancel",
                      "lockTimeout" : "10s",
                      "onStoreDown" : "FAIL"
                    },
                    {
                      "operation" : "Orders.list",
                      "class" : "com.example.shop.Orders",
                      "method" : "list",
                      "parameterTypes" : [
                        "int[]"
                      ],
                      "returnType" : "java.util.List<com.example.shop.Orders$Receipt>",
                      "tier" : "READ_ONLY",
                      "key" : "",
                      "ttl" : "24h",
                      "compensate" : null,
                      "lockTimeout" : "10s",
                      "onStoreDown" : "FAIL"
                    },
                    {
                      "operation" : "payments.send",
                      "class" : "com.example.Payments$Gateway",
                      "method" : "send",
                      "parameterTypes" : [
                        "java.lang.String",
                        "com.example.Payments$Gateway$Nested[]"
                      ],
                      "returnType" : "void",
                      "tier" : "IRREVERSIBLE",
                      "key" : "#p0",
                      "ttl" : "24h",
                      "compensate" : null,
                      "lockTimeout" : "30s",
                      "onStoreDown" : "FAIL"
                    }
                  ]
                }
                """);
    }

    @Test
    void keysAreEscapedAsJson() throws IOException {
        JavaFileObject quoting = source("Quoting", """
                package com.example;
                import dev.idempotency.*;
                public class Quoting {
                    @Idempotent(key = "'say \\"hi\\"\\\\n' + #a", tier = Tier.REVERSIBLE)
                    public void greet(String a) { }
                }
                """);
        Compilation c = compile(quoting);
        assertThat(c).succeededWithoutWarnings();
        assertThat(json(c)).contains("\"key\" : \"'say \\\"hi\\\"\\\\n' + #a\"");
    }

    @Test
    void aCompilationWithoutOperationsWritesNone() {
        // javac calls a processor only when one of its annotations is present
        Compilation c = compile(source("Plain", "package com.example; public class Plain { }"));
        assertThat(c).succeededWithoutWarnings();
        assertThat(c.generatedFile(StandardLocation.CLASS_OUTPUT, "META-INF/idempotency/operations.json"))
                .isEmpty();
    }

    @Test
    void javacFindsTheProcessorThroughItsServiceFile(@TempDir Path out) throws IOException {
        // plain javac, no processor named: it discovers processors on the class path, as a consumer's build does
        // (compile-testing always names its processors, so it cannot show this)
        StringWriter diagnostics = new StringWriter();
        assertThat(javac(out, diagnostics, ORDERS)).as(diagnostics.toString()).isTrue();
        assertThat(diagnostics.toString()).isEmpty();
        assertThat(Files.readString(out.resolve("META-INF/idempotency/operations.json")))
                .contains("\"operation\" : \"Orders.create\"");
    }

    @Test
    void theAdminReadsWhatTheProcessorWrote(@TempDir Path out) throws IOException {
        StringWriter diagnostics = new StringWriter();
        assertThat(javac(out, diagnostics, ORDERS, PAYMENTS)).as(diagnostics.toString()).isTrue();
        try (URLClassLoader classes = new URLClassLoader(new URL[] {out.toUri().toURL()}, null)) {
            IdempotencyAdmin admin = IdempotencyAdmin.builder(new InMemoryIdempotencyStore()).classLoader(classes)
                    .build();
            assertThat(admin.operations()).extracting(IdempotencyAdmin.Operation::name)
                    .containsExactly("Orders.create", "Orders.list", "payments.send");
            assertThat(admin.operation("Orders.create")).contains(new IdempotencyAdmin.Operation("Orders.create",
                    "com.example.shop.Orders", "create", List.of("java.lang.String", "java.util.List",
                    "java.lang.String"), "com.example.shop.Orders$Receipt", Tier.REVERSIBLE,
                    "'APPROVAL:' + #approvalNo + ':MAIN'", Duration.ofDays(7), "cancel", Duration.ofSeconds(10)));
        }
    }

    @Test
    void aRefusedCompilationWritesNoInventory(@TempDir Path out) {
        JavaFileObject bad = source("Bad", """
                package com.example;
                import dev.idempotency.*;
                public class Bad {
                    @Idempotent(tier = Tier.READ_ONLY)
                    public void read(String a) { }
                    @Idempotent(tier = Tier.REVERSIBLE)
                    public void run(String a) { }
                }
                """);
        StringWriter diagnostics = new StringWriter();
        assertThat(javac(out, diagnostics, bad)).isFalse();
        assertThat(diagnostics.toString()).contains("Bad.run is REVERSIBLE but its key is blank");
        assertThat(out.resolve("META-INF/idempotency/operations.json")).doesNotExist();
    }

    private static boolean javac(Path out, StringWriter diagnostics, JavaFileObject... sources) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        return javac.getTask(diagnostics, null, null, List.of("-Xlint:all,-processing", "-d", out.toString(),
                "-classpath", System.getProperty("java.class.path")), null, List.of(sources)).call();
    }

    private static String json(Compilation c) throws IOException {
        Optional<JavaFileObject> file = c.generatedFile(StandardLocation.CLASS_OUTPUT,
                "META-INF/idempotency/operations.json");
        assertThat(file).as("operations.json").isPresent();
        return file.get().getCharContent(true).toString();
    }
}
