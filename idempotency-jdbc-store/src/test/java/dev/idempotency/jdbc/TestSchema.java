package dev.idempotency.jdbc;

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
 * Creates a test's own table from the very script the dialect ships ({@link JdbcDialect#schemaLocation()}), with a
 * unique name in place of {@code idempotency_record} (other builds use the same databases at the same time), and
 * drops it afterwards.
 */
final class TestSchema {

    private TestSchema() {
    }

    /** A fresh table name: {@code idem_} and 20 random characters. */
    static String uniqueTableName() {
        return "idem_" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
    }

    /** Runs the dialect's shipped script with {@code table} in place of the default name. */
    static void create(DataSource dataSource, JdbcDialect dialect, String table) {
        String script = script(dialect).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
    }

    /** Runs the shipped script at {@code location} with {@code table} in place of the default name. */
    static void create(DataSource dataSource, String location, String table) {
        String script = script(location).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
    }

    static void drop(DataSource dataSource, String table) {
        new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + table);
    }

    static String script(JdbcDialect dialect) {
        return script(dialect.schemaLocation());
    }

    static String script(String location) {
        try (InputStream in = new ClassPathResource(location).getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + location, e);
        }
    }
}
