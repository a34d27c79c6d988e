package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.JdbcDialect;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

class IdempotencySchemaInitializerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                    DataSourceAutoConfiguration.class));

    private static String script(JdbcDialect dialect) throws IOException {
        return script(dialect.schemaLocation());
    }

    private static String script(String location) throws IOException {
        return new ClassPathResource(location).getContentAsString(StandardCharsets.UTF_8);
    }

    @Test
    void theShippedScriptsAreRenamedWholly() throws IOException {
        for (JdbcDialect dialect : new JdbcDialect[] {JdbcDialect.h2(), JdbcDialect.postgresql(), JdbcDialect.mysql(),
                JdbcDialect.mariadb()}) {
            String renamed = IdempotencySchemaInitializer.rename(script(dialect), "orders_idem");
            assertThat(renamed).as(dialect.name()).doesNotContain("idempotency_record")
                    .contains("CREATE TABLE orders_idem ");
        }
    }

    @Test
    void theClaimProcedureScriptIsRenamedWholly() throws IOException {
        String script = new ClassPathResource(JdbcDialect.mariadb().claimProcedureLocation().orElseThrow())
                .getContentAsString(StandardCharsets.UTF_8);
        assertThat(IdempotencySchemaInitializer.rename(script, "orders_idem")).doesNotContain("idempotency_record")
                .contains("CREATE PROCEDURE orders_idem_claim_v1(").contains(" FROM orders_idem WHERE ");
    }

    @Test
    void theAuditTableIsRenamedAsTheStoresIsQualifiedButNotItsIndexOrConstraintNames() throws IOException {
        String audit = script(JdbcDialect.postgresql().auditSchemaLocation());
        String renamed = IdempotencySchemaInitializer.renameAudit(audit, "billing.orders_idem_audit");
        assertThat(renamed).contains("CREATE TABLE billing.orders_idem_audit (")
                .contains("CONSTRAINT orders_idem_audit_pk PRIMARY KEY (id)")
                .contains("CREATE INDEX orders_idem_audit_key ON billing.orders_idem_audit (key_hash, id)")
                .doesNotContain("idempotency_record");
    }

    @Test
    void aSchemaQualifiedNameQualifiesTheTableAndItsDomainButNotItsIndexOrConstraintNames() throws IOException {
        String renamed = IdempotencySchemaInitializer.rename(script(JdbcDialect.postgresql()), "billing.orders_idem");
        assertThat(renamed).contains("CREATE TABLE billing.orders_idem ")
                .contains(" ON billing.orders_idem ")
                // the digest domain is a schema object of its own: made in the table's schema, the columns of it
                .contains("CREATE DOMAIN billing.orders_idem_sha256 AS BYTEA")
                .contains("CONSTRAINT orders_idem_sha256_len CHECK")
                .contains("key_hash    billing.orders_idem_sha256 NOT NULL")
                .contains("fingerprint billing.orders_idem_sha256 NOT NULL")
                .doesNotContain("billing.orders_idem_pk").doesNotContain("billing.orders_idem_status")
                .doesNotContain("billing.orders_idem_sha256_len");
    }

    @Test
    void alwaysCreatesTheTableOnceAndASecondStartFindsIt() {
        EmbeddedDatabase db = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true)
                .build();
        try {
            ApplicationContextRunner onDb = runner.withBean(DataSource.class, () -> db)
                    .withBean(IdempotencyAutoConfigurationTest.Greeter.class)
                    .withPropertyValues("idempotency.jdbc.initialize-schema=always",
                            "idempotency.jdbc.table-name=custom_idem");
            onDb.run(context -> assertThat(context).hasNotFailed());
            onDb.run(context -> {
                assertThat(context).hasNotFailed();
                context.getBean(IdempotencyAutoConfigurationTest.Greeter.class).greet("K1", "ann");
            });
            assertThat(new JdbcTemplate(db).queryForObject("SELECT COUNT(*) FROM custom_idem", Integer.class))
                    .isEqualTo(1);
        } finally {
            db.shutdown();
        }
    }
}
