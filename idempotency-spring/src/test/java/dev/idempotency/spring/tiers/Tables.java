package dev.idempotency.spring.tiers;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * The two tables of one test class, uniquely named (other builds use the same databases at the same time): the
 * idempotency table, from the very script the dialect ships, and the service's ledger of business writes.
 */
public record Tables(String idempotency, String ledger) {

    public static Tables unique() {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        return new Tables("idem_tier_" + suffix, "ledger_tier_" + suffix);
    }

    public void create(DataSource dataSource, JdbcDialect dialect) {
        String script = shipped(dialect).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, idempotency)
                + "\nCREATE TABLE " + ledger + " (entry_id VARCHAR(64) PRIMARY KEY, kind VARCHAR(16) NOT NULL,"
                + " ref VARCHAR(255) NOT NULL);\n";
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
    }

    public void drop(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("DROP TABLE IF EXISTS " + ledger);
        JdbcDialect.of(dataSource).dropStatements(idempotency).forEach(jdbc::execute);
    }

    private static String shipped(JdbcDialect dialect) {
        try (InputStream in = new ClassPathResource(dialect.schemaLocation()).getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + dialect.schemaLocation(), e);
        }
    }
}
