package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/quickstart-boot-postgresql.md shows exactly this module: each file it names is this module's file, each
 * {@code pom.xml} excerpt is in this module's pom, the first migration is the shipped PostgreSQL script byte for byte,
 * and the H2 twins the test runs on are the shipped H2 script and the page's own V2. Not on the page.
 */
class QuickstartPageTest {

    private static final Path PAGE = Path.of("..", "..", "docs", "quickstart-boot-postgresql.md");
    private static final Pattern BLOCK = Pattern.compile(
            "\\*\\*`([^`]+)`\\*\\*( \\(excerpt\\))?\\n\\n```[a-z]*\\n(.*?)\\n```", Pattern.DOTALL);

    private record Block(String path, boolean excerpt, String text) {
    }

    private static List<Block> blocks() throws IOException {
        Matcher m = BLOCK.matcher(Files.readString(PAGE));
        List<Block> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(new Block(m.group(1), m.group(2) != null, m.group(3)));
        }
        return blocks;
    }

    private static String squeezed(String xml) {
        return xml.replaceAll("<!--.*?-->", "").replaceAll("\\s+", "");
    }

    @Test
    void everyFileOnThePageIsThisModulesFile() throws IOException {
        List<Block> blocks = blocks();
        assertThat(blocks).extracting(Block::path).contains("pom.xml",
                "src/main/resources/db/migration/V2__orders.sql", "src/main/resources/application.properties",
                "src/main/java/com/example/orders/OrdersApplication.java",
                "src/main/java/com/example/orders/OrderReceipt.java",
                "src/main/java/com/example/orders/OrderService.java",
                "src/test/java/com/example/orders/OrderServiceTest.java");
        String pom = Files.readString(Path.of("pom.xml"));
        for (Block block : blocks) {
            if (!block.excerpt()) {
                assertThat(Files.readString(Path.of(block.path())).stripTrailing()).as(block.path())
                        .isEqualTo(block.text());
            } else if (block.text().contains("<idempotency.version>")) {
                // the page names the version; this module takes the reactor's, which must be the same
                assertThat(block.text()).as("the version on the page")
                        .contains("<idempotency.version>" + projectVersion(pom) + "</idempotency.version>");
            } else {
                assertThat(squeezed(pom)).as("pom.xml holds the page's excerpt:\n" + block.text())
                        .contains(squeezed(block.text()));
            }
        }
    }

    private static String projectVersion(String pom) {
        Matcher m = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL).matcher(pom);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    @Test
    void theMigrationsAreTheShippedScripts() throws IOException {
        assertThat(Files.readString(Path.of("src/main/resources/db/migration/V1__idempotency.sql")))
                .isEqualTo(shipped("dev/idempotency/jdbc/schema-postgresql.sql"));
        assertThat(Files.readString(Path.of("src/test/resources/db/h2/V1__idempotency.sql")))
                .isEqualTo(shipped("dev/idempotency/jdbc/schema-h2.sql"));
        assertThat(Files.readString(Path.of("src/test/resources/db/h2/V2__orders.sql")))
                .isEqualTo(Files.readString(Path.of("src/main/resources/db/migration/V2__orders.sql")));
        assertThat(Files.readString(PAGE)).contains("dev/idempotency/jdbc/schema-postgresql.sql >"
                + " src/main/resources/db/migration/V1__idempotency.sql");
        assertThat(Files.readString(Path.of("src/main/resources/db/migration/V3__idempotency_audit.sql")))
                .isEqualTo(shipped("dev/idempotency/jdbc/audit-postgresql.sql"));
        assertThat(Files.readString(Path.of("src/test/resources/db/h2/V3__idempotency_audit.sql")))
                .isEqualTo(shipped("dev/idempotency/jdbc/audit-h2.sql"));
        assertThat(Files.readString(PAGE)).contains("dev/idempotency/jdbc/audit-postgresql.sql >"
                + " src/main/resources/db/migration/V3__idempotency_audit.sql");
    }

    private static String shipped(String location) throws IOException {
        try (InputStream in = QuickstartPageTest.class.getClassLoader().getResourceAsStream(location)) {
            assertThat(in).as(location).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
