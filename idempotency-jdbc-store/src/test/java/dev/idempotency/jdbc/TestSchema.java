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

    /**
     * Runs the dialect's shipped script with {@code table} in place of the default name, then its claim procedure's
     * if it has one ({@link JdbcDialect#claimProcedureLocation()}: MariaDB's), as the store is meant to be run.
     */
    static void create(DataSource dataSource, JdbcDialect dialect, String table) {
        String script = script(dialect).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
        dialect.claimProcedureLocation().ifPresent(location -> createClaimProcedure(dataSource, location, table));
    }

    /** Creates {@code table}'s claim procedure on MariaDB: the shipped script is one statement, run as it is. */
    static void createClaimProcedure(DataSource dataSource, String table) {
        createClaimProcedure(dataSource, JdbcDialect.mariadb().claimProcedureLocation().orElseThrow(), table);
    }

    private static void createClaimProcedure(DataSource dataSource, String location, String table) {
        new JdbcTemplate(dataSource).execute(script(location).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table));
    }

    /** Runs the shipped script at {@code location} with {@code table} in place of the default name. */
    static void create(DataSource dataSource, String location, String table) {
        String script = script(location).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
    }

    /** Drops {@code table} and what its scripts made beside it ({@link JdbcDialect#dropStatements}). */
    static void drop(DataSource dataSource, String table) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        JdbcDialect.of(dataSource).dropStatements(table).forEach(jdbc::execute);
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
