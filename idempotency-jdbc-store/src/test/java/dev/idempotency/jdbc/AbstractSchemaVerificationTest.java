package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * {@link JdbcIdempotencyStore#verifySchema()}: a table made from the shipped script passes; a missing table, a missing
 * column or a missing primary key fails with the table, what is wrong and the script to run.
 */
abstract class AbstractSchemaVerificationTest {

    private final List<String> tables = new ArrayList<>();

    abstract RealDatabase database();

    @AfterEach
    void dropTables() {
        tables.forEach(t -> TestSchema.drop(database().dataSource(), t));
    }

    private String table() {
        String table = TestSchema.uniqueTableName();
        tables.add(table);
        return table;
    }

    private JdbcIdempotencyStore store(String table) {
        return JdbcIdempotencyStore.builder(database().dataSource()).tableName(table).build();
    }

    private void create(String table, String script) {
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(database().dataSource());
    }

    @Test
    void aTableMadeFromTheShippedScriptPasses() {
        String table = table();
        TestSchema.create(database().dataSource(), database().dialect(), table);
        assertThatCode(() -> store(table).verifySchema()).doesNotThrowAnyException();
    }

    @Test
    void aMissingTableNamesTheScriptThatCreatesIt() {
        String table = table();
        assertThatThrownBy(() -> store(table).verifySchema())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the table " + table + " does not exist")
                .hasMessageContaining("create it with the script " + database().dialect().schemaLocation());
    }

    @Test
    void aMissingColumnIsNamed() {
        String table = table();
        TestSchema.create(database().dataSource(), database().dialect(), table);
        new JdbcTemplate(database().dataSource()).execute("ALTER TABLE " + table + " DROP COLUMN result"); // a column no index holds
        assertThatThrownBy(() -> store(table).verifySchema())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the table " + table + " lacks the column result of "
                        + database().dialect().schemaLocation());
    }

    @Test
    void aTableWithoutThePrimaryKeyFails() {
        String table = table();
        String script = TestSchema.script(database().dialect())
                .replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table)
                .replace("PRIMARY KEY (key_hash)", "UNIQUE (key_hash)");
        assertThat(script).doesNotContain("PRIMARY KEY");
        create(table, script);
        assertThatThrownBy(() -> store(table).verifySchema())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the table " + table + " has no primary key where "
                        + database().dialect().schemaLocation() + " declares PRIMARY KEY (key_hash)");
    }
}
