package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The scripts ship where the dialects say, and docs/stores.md quotes them verbatim, so the two cannot drift. */
class SchemaScriptsTest {

    @Test
    void everyDialectShipsItsScriptAndTheDocsQuoteIt() throws IOException {
        Path docs = Path.of(System.getProperty("basedir", ".")).resolve("../docs/stores.md");
        String guide = Files.readString(docs, StandardCharsets.UTF_8);
        for (JdbcDialect dialect : new JdbcDialect[] {JdbcDialect.h2(), JdbcDialect.postgresql(), JdbcDialect.mysql(),
                JdbcDialect.mariadb()}) {
            String script = TestSchema.script(dialect);
            assertThat(script).contains("CREATE TABLE idempotency_record (")
                    .contains("idempotency_record_expires_at");
            assertThat(guide).as("docs/stores.md quotes %s", dialect.schemaLocation()).contains(script.strip());
        }
        assertThat(JdbcDialect.postgresql().schemaLocation()).isEqualTo("dev/idempotency/jdbc/schema-postgresql.sql");
    }
}
