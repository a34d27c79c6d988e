package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        for (JdbcDialect dialect : new JdbcDialect[] {JdbcDialect.h2(), JdbcDialect.postgresql(), JdbcDialect.mysql(),
                JdbcDialect.mariadb()}) {
            String audit = TestSchema.script(dialect.auditSchemaLocation());
            assertThat(audit).contains("CREATE TABLE " + JdbcIdempotencyAudit.DEFAULT_TABLE_NAME + " (");
            assertThat(guide).as("docs/stores.md quotes %s", dialect.auditSchemaLocation()).contains(audit.strip());
        }
        String migration = TestSchema.script(PostgresDialect.DIGEST_DOMAIN_MIGRATION);
        assertThat(guide).as("docs/stores.md quotes %s", PostgresDialect.DIGEST_DOMAIN_MIGRATION)
                .contains(migration.strip());
    }

    /**
     * What drops a table names what each dialect's scripts make beside it, the table first (PostgreSQL's columns use
     * the domain), and takes no text that is not a table's name.
     */
    @Test
    void dropStatementsNameTheTableAndWhatItsScriptsMadeBesideIt() {
        assertThat(JdbcDialect.postgresql().dropStatements("billing.orders_idem")).containsExactly(
                "DROP TABLE IF EXISTS billing.orders_idem", "DROP TABLE IF EXISTS billing.orders_idem_audit",
                "DROP DOMAIN IF EXISTS billing.orders_idem_sha256");
        assertThat(JdbcDialect.mariadb().dropStatements("orders_idem")).containsExactly(
                "DROP TABLE IF EXISTS orders_idem", "DROP TABLE IF EXISTS orders_idem_audit",
                "DROP PROCEDURE IF EXISTS orders_idem_claim_v1");
        assertThat(JdbcDialect.mysql().dropStatements("orders_idem"))
                .containsExactly("DROP TABLE IF EXISTS orders_idem", "DROP TABLE IF EXISTS orders_idem_audit");
        assertThat(JdbcDialect.h2().dropStatements("orders_idem"))
                .containsExactly("DROP TABLE IF EXISTS orders_idem", "DROP TABLE IF EXISTS orders_idem_audit");
        for (String bad : new String[] {"t; DROP TABLE x", "a.b.c", "", "\"t\""}) {
            assertThatThrownBy(() -> JdbcDialect.postgresql().dropStatements(bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
        }
    }

    /**
     * MariaDB's claim procedure holds the statements of the compound claim it stands for, word for word (but the
     * parameters' names), and the docs quote it.
     */
    @Test
    void theClaimProcedureRunsTheCompoundClaimsStatementsAndTheDocsQuoteIt() throws IOException {
        String location = JdbcDialect.mariadb().claimProcedureLocation().orElseThrow();
        assertThat(location).isEqualTo("dev/idempotency/jdbc/schema-mariadb-claim-procedure.sql");
        assertThat(JdbcDialect.postgresql().claimProcedureLocation()).isEmpty();
        assertThat(JdbcDialect.mysql().claimProcedureLocation()).isEmpty();
        String procedure = TestSchema.script(location);
        String body = oneLine(procedure.replaceAll("(?m)^\\s*--.*$", ""));
        String compound = oneLine(JdbcDialect.mariadb().statements().claimAtOnce()
                .replace(JdbcDialect.TABLE, JdbcIdempotencyStore.DEFAULT_TABLE_NAME));
        assertThat(body).startsWith("CREATE PROCEDURE idempotency_record" + MariaDbDialect.PROCEDURE_SUFFIX + "(");
        for (String[] piece : new String[][] {{"SELECT EXISTS", ") INTO"}, {"IF ", " THEN"},
                {"SELECT key_hash,", ";"}, {"INSERT INTO", ") VALUES"}, {"ON DUPLICATE KEY", ";"}}) {
            int from = compound.indexOf(piece[0]);
            String fragment = compound.substring(from, compound.indexOf(piece[1], from) + piece[1].length());
            assertThat(body).as("the procedure runs %s", fragment).contains(fragment.replace("IF f", "IF x"));
        }
        assertThat(body).contains("SET STATEMENT innodb_lock_wait_timeout = w FOR INSERT")
                .contains("VALUES (k, o, i, f, t, 'IN_FLIGHT', l, c, e, n)");
        Path docs = Path.of(System.getProperty("basedir", ".")).resolve("../docs/stores.md");
        assertThat(Files.readString(docs, StandardCharsets.UTF_8)).as("docs/stores.md quotes %s", location)
                .contains(procedure.strip());
    }

    private static String oneLine(String sql) {
        return sql.strip().replaceAll("\\s+", " ");
    }

    /**
     * The partitioned script is the plain one's domain and table, partitioned: the store verifies both against the
     * plain one.
     */
    @Test
    void thePartitionedPostgresTableHasThePlainOnesColumnsAndConstraints() {
        String plain = TestSchema.script(JdbcDialect.postgresql());
        String partitioned = TestSchema.script("dev/idempotency/jdbc/schema-postgresql-partitioned.sql");
        String domain = plain.substring(plain.indexOf("CREATE DOMAIN"), plain.indexOf("CREATE TABLE"));
        assertThat(domain).contains("CREATE DOMAIN idempotency_record_sha256 AS BYTEA")
                .contains("CHECK (octet_length(VALUE) = 32);");
        int create = plain.indexOf("CREATE TABLE");
        String table = plain.substring(create, plain.indexOf(");", create));
        assertThat(table).contains("key_hash    idempotency_record_sha256 NOT NULL")
                .contains("fingerprint idempotency_record_sha256 NOT NULL");
        assertThat(partitioned).contains(domain + table + ") PARTITION BY HASH (key_hash);")
                .contains(plain.substring(plain.indexOf("CREATE INDEX")).strip());
        for (int i = 0; i < 16; i++) {
            assertThat(partitioned).contains("CREATE TABLE idempotency_record_p" + i
                    + " PARTITION OF idempotency_record FOR VALUES WITH (MODULUS 16, REMAINDER " + i + ");");
        }
    }
}
