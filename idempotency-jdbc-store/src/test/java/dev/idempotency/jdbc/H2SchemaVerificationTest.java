package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link AbstractSchemaVerificationTest} on an embedded H2, and what the check reads from each shipped script. */
class H2SchemaVerificationTest extends AbstractSchemaVerificationTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.h2(2);

    @Override
    RealDatabase database() {
        return database;
    }

    @Test
    void everyShippedScriptDeclaresTheColumnsAndTheKeyTheCheckExpects() {
        for (JdbcDialect dialect : List.of(JdbcDialect.h2(), JdbcDialect.postgresql(), JdbcDialect.mysql(),
                JdbcDialect.mariadb())) {
            String script = TestSchema.script(dialect);
            assertThat(SchemaVerifier.columns(script)).as(dialect.schemaLocation()).contains("key_hash",
                    "operation", "idem_key", "fingerprint", "tier", "status", "result", "lease_until", "created_at",
                    "expires_at").doesNotContain("constraint", "primary", "index");
            assertThat(SchemaVerifier.primaryKey(script)).as(dialect.schemaLocation()).containsExactly("key_hash");
        }
    }
}
