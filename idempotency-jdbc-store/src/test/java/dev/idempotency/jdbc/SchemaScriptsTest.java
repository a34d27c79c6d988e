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
                    .contains("idempotency_record_status_expires_at").contains("(status, expires_at)")
                    .doesNotContain("(status, lease_until").doesNotContain("(status)");
            assertThat(guide).as("docs/stores.md quotes %s", dialect.schemaLocation()).contains(script.strip());
        }
        assertThat(JdbcDialect.postgresql().schemaLocation()).isEqualTo("dev/idempotency/jdbc/schema-postgresql.sql");
    }

    /** The partitioned script is the plain one's table, partitioned: the store verifies both against the plain one. */
    @Test
    void thePartitionedPostgresTableHasThePlainOnesColumnsAndConstraints() {
        String plain = TestSchema.script(JdbcDialect.postgresql());
        String partitioned = TestSchema.script("dev/idempotency/jdbc/schema-postgresql-partitioned.sql");
        String table = plain.substring(plain.indexOf("CREATE TABLE"), plain.indexOf(");"));
        assertThat(partitioned).contains(table + ") PARTITION BY HASH (key_hash);")
                .contains(plain.substring(plain.indexOf("CREATE INDEX")).strip());
        for (int i = 0; i < 16; i++) {
            assertThat(partitioned).contains("CREATE TABLE idempotency_record_p" + i
                    + " PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER " + i + ");");
        }
    }
}
