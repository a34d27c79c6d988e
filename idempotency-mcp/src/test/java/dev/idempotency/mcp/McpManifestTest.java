package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/** The tool list read from an {@code operations.json}, without a bean or a server. */
class McpManifestTest {

    @TempDir
    Path dir;

    @Test
    void theOperationsOfTheBuildBecomeTheToolsAndAModelKeyedOneIsRefused() throws IOException {
        Path file = dir.resolve("META-INF/idempotency/operations.json");
        Files.createDirectories(file.getParent());
        String refunds = SpringBeanToolsTest.Refunds.class.getName();
        Files.writeString(file, """
                {"format": 1, "operations": [
                  {"operation": "Refunds.status", "class": "%1$s", "method": "status",
                   "parameterTypes": ["java.lang.String"], "returnType": "java.lang.String", "tier": "READ_ONLY",
                   "key": "", "ttl": "24h", "compensate": null, "lockTimeout": "10s"},
                  {"operation": "refund", "class": "%1$s", "method": "refund",
                   "parameterTypes": ["java.lang.String", "long", "java.lang.String"], "returnType": "R",
                   "tier": "IRREVERSIBLE", "key": "'REFUND:' + #idempotencyKey", "ttl": "7d", "compensate": null,
                   "lockTimeout": "10s"},
                  {"operation": "ModelKeyed.refund", "class": "%2$s", "method": "refund",
                   "parameterTypes": ["java.lang.String", "java.lang.String"], "returnType": "java.lang.String",
                   "tier": "IRREVERSIBLE", "key": "'REFUND:' + #orderId", "ttl": "24h", "compensate": null,
                   "lockTimeout": "10s"}
                ]}
                """.formatted(refunds, SpringBeanToolsTest.ModelKeyed.class.getName()));

        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            McpManifest.Manifest manifest = McpManifest.read(loader);

            Map<String, McpSchema.Tool> tools = manifest.tools().stream()
                    .collect(Collectors.toMap(McpSchema.Tool::name, t -> t));
            assertThat(tools).containsOnlyKeys("Refunds.status", "refund");
            assertThat(tools.get("refund").meta()).containsEntry(McpMeta.TIER, "IRREVERSIBLE")
                    .containsEntry(McpMeta.CONFIRMATION, "elicitation");
            assertThat(tools.get("refund").annotations().destructiveHint()).isTrue();
            assertThat(AbstractMcpToolsTest.properties(tools.get("refund")))
                    .as("no token argument: tokens are off unless the server sets them")
                    .containsOnlyKeys("orderId", "cents", "idempotencyKey");
            assertThat(JsonMapper.builder().build().writeValueAsString(manifest.tools()))
                    .contains("\"_meta\":{\"dev.idempotency/tier\":\"IRREVERSIBLE\"", "\"x-mcp-header\":\"Idempotency-Key\"");
            assertThat(manifest.refused()).singleElement().asString()
                    .startsWith("ModelKeyed.refund: ModelKeyed.refund is IRREVERSIBLE")
                    .contains("its key must come from outside the model");
        }
    }
}
