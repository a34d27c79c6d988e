package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The IDE metadata is generated for every property, and docs/spring-boot.md lists each one. */
class ConfigurationMetadataTest {

    private static List<String> properties() throws IOException {
        try (InputStream in = IdempotencyProperties.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json (spring-boot-configuration-processor)")
                    .isNotNull();
            JsonNode root = JsonMapper.builder().build().readTree(in);
            List<String> names = new ArrayList<>();
            for (JsonNode property : root.get("properties")) {
                assertThat(property.path("description").asString()).as(property.get("name").asString())
                        .isNotBlank();
                names.add(property.get("name").asString());
            }
            return names;
        }
    }

    @Test
    void everyPropertyHasMetadataWithADescription() throws IOException {
        assertThat(properties()).contains("idempotency.enabled", "idempotency.default-ttl",
                "idempotency.default-lock-timeout", "idempotency.max-waiters-per-key", "idempotency.jdbc.table-name", "idempotency.jdbc.initialize-schema",
                "idempotency.prefilter.enabled", "idempotency.prefilter.maximum-size", "idempotency.prefilter.max-bytes",
                "idempotency.prefilter.maximum-age", "idempotency.purge.enabled", "idempotency.purge.interval",
                "idempotency.purge.batch-size", "idempotency.circuit-breaker.enabled",
                "idempotency.circuit-breaker.failure-threshold", "idempotency.circuit-breaker.open-for");
    }

    @Test
    void theGuideListsEveryProperty() throws IOException {
        String guide = Files.readString(Path.of("..", "docs", "spring-boot.md"));
        for (String property : properties()) {
            assertThat(guide).as("docs/spring-boot.md").contains("| `" + property + "` |");
        }
    }
}
