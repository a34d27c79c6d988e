package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.JavaFileObjects;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** An MCP tool (a class marked {@code @McpTool}) takes its key from outside the model: its idempotencyKey parameter. */
class McpToolRulesTest {

    /** A stand-in for idempotency-mcp's marker, in its real package: the processor recognises it by name. */
    private static final JavaFileObject MCP_TOOL = JavaFileObjects.forSourceString("dev.idempotency.mcp.McpTool", """
            package dev.idempotency.mcp;
            import java.lang.annotation.*;
            @Inherited
            @Retention(RetentionPolicy.RUNTIME)
            @Target(ElementType.TYPE)
            public @interface McpTool { }
            """);

    private static JavaFileObject refunds(String marker, String annotation, String parameters) {
        return source("Refunds", """
                package com.example;
                import dev.idempotency.*;
                %s
                public class Refunds {
                    %s
                    public String refund(%s) { return orderId; }
                }
                """.formatted(marker, annotation, parameters));
    }

    @ParameterizedTest
    @ValueSource(strings = {"REVERSIBLE", "IRREVERSIBLE"})
    void aToolKeyedOnTheModelsArgumentsIsRefusedAtItsKey(String tier) {
        JavaFileObject bad = refunds("@dev.idempotency.mcp.McpTool",
                "@Idempotent(tier = Tier." + tier + ",\n        key = \"'REFUND:' + #orderId\")",
                "String orderId, long cents");
        Compilation c = compile(bad, MCP_TOOL);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("Refunds.refund is an MCP tool (@McpTool on Refunds) and " + tier
                + ", but its key \"'REFUND:' + #orderId\" is made from arguments the model writes, not from an"
                + " idempotencyKey parameter").inFile(bad).onLineContaining("key = \"'REFUND:' + #orderId\"");
        assertThat(c).hadErrorContaining("add a parameter String idempotencyKey");
    }

    @Test
    void aToolWithTheParameterButAKeyThatIgnoresItIsRefused() {
        JavaFileObject bad = refunds("@dev.idempotency.mcp.McpTool",
                "@Idempotent(tier = Tier.IRREVERSIBLE, key = \"#orderId + #idempotencyKeyCopy\")",
                "String orderId, String idempotencyKey, String idempotencyKeyCopy");
        Compilation c = compile(bad, MCP_TOOL);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining("not from its idempotencyKey parameter");
        assertThat(c).hadErrorContaining("key on it, such as key = \"'REFUND:' + #idempotencyKey\"");
    }

    @Test
    void aSubclassOfAToolClassIsATool() {
        JavaFileObject base = source("Tools", """
                package com.example;
                @dev.idempotency.mcp.McpTool
                public class Tools { }
                """);
        JavaFileObject bad = source("Refunds", """
                package com.example;
                import dev.idempotency.*;
                public class Refunds extends Tools {
                    @Idempotent(tier = Tier.IRREVERSIBLE, key = "#orderId")
                    public String refund(String orderId) { return orderId; }
                }
                """);
        assertThat(compile(bad, base, MCP_TOOL)).hadErrorContaining("(@McpTool on Tools)");
    }

    @Test
    void aToolKeyedOnItsIdempotencyKeyAReadOnlyToolAndAMethodOfAnUnmarkedClassCompile() {
        assertThat(compile(refunds("@dev.idempotency.mcp.McpTool",
                "@Idempotent(tier = Tier.IRREVERSIBLE, key = \"'REFUND:' + #idempotencyKey\")",
                "String orderId, String idempotencyKey"), MCP_TOOL)).succeededWithoutWarnings();
        assertThat(compile(refunds("@dev.idempotency.mcp.McpTool", "@Idempotent(tier = Tier.READ_ONLY)",
                "String orderId"), MCP_TOOL)).succeededWithoutWarnings();
        assertThat(compile(refunds("", "@Idempotent(tier = Tier.IRREVERSIBLE, key = \"'REFUND:' + #orderId\")",
                "String orderId"), MCP_TOOL)).succeededWithoutWarnings();
    }
}
