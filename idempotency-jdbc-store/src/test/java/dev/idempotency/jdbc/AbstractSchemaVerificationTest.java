package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * {@link JdbcIdempotencyStore#verifySchema()}: a table made from the shipped script passes; a missing table, a missing
 * column or a missing primary key fails with the table, what is wrong and the script to run. And a table made by an
 * older script, with its two secondary indexes (or only the expires_at one), still passes and serves, and the shipped
 * {@code migrate-status-expires-index-*.sql} gives it exactly the shipped script's indexes.
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
        // a column no index holds
        new JdbcTemplate(database().dataSource()).execute("ALTER TABLE " + table + " DROP COLUMN result");
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

    @Test
    void aTableWithTheOlderTwoIndexesServesAndMigratesToTheShippedIndex() throws SQLException {
        String table = olderTable(true);
        assertThat(indexes(table)).containsOnlyKeys("t_expires_at", "t_status");
        migrateAndCompare(table);
    }

    @Test
    void aTableFromBeforeTheStatusIndexMigratesToTheShippedIndex() throws SQLException {
        String table = olderTable(false);
        assertThat(indexes(table)).containsOnlyKeys("t_expires_at");
        migrateAndCompare(table);
    }

    /** A table as an older shipped script made it: its indexes were expires_at's and, later, the status index. */
    private String olderTable(boolean withStatusIndex) {
        String table = table();
        TestSchema.create(database().dataSource(), database().dialect(), table);
        JdbcTemplate jdbc = new JdbcTemplate(database().dataSource());
        String dialect = database().dialect().name();
        if (dialect.equals("mariadb")) {
            jdbc.execute("ALTER TABLE " + table + " DROP INDEX " + table + "_status_expires_at, ADD INDEX " + table
                    + "_expires_at (expires_at)" + (withStatusIndex ? ", ADD INDEX " + table + "_status (status)"
                    : ""));
        } else {
            jdbc.execute("DROP INDEX " + table + "_status_expires_at");
            jdbc.execute("CREATE INDEX " + table + "_expires_at ON " + table + " (expires_at)");
            if (withStatusIndex) {
                jdbc.execute("CREATE INDEX " + table + "_status ON " + table + " (status, lease_until)"
                        + (dialect.equals("postgresql") ? " WHERE status <> 'COMPLETED'" : ""));
            }
        }
        // the statements name no index and the check asks for none: the older table passes and serves
        JdbcIdempotencyStore store = store(table);
        assertThatCode(store::verifySchema).doesNotThrowAnyException();
        Instant now = Instant.now();
        assertThat(store.purgeExpired(now, 10)).isZero();
        assertThat(store.backlog(now)).isEmpty();
        assertThat(store.listNeedsReview(10)).isEmpty();
        assertThat(store.listStuck(now, 10)).isEmpty();
        return table;
    }

    private void migrateAndCompare(String table) throws SQLException {
        String migration = "dev/idempotency/jdbc/migrate-status-expires-index-" + database().dialect().name() + ".sql";
        create(table, TestSchema.script(migration).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table));
        String shipped = table();
        TestSchema.create(database().dataSource(), database().dialect(), shipped);
        assertThat(indexes(table)).isEqualTo(indexes(shipped))
                .isEqualTo(Map.of("t_status_expires_at", List.of("status", "expires_at")));
        assertThatCode(store(table)::verifySchema).doesNotThrowAnyException();
    }

    /** The table's non-unique indexes, by name (the table's name as "t") and their columns in order, lower case. */
    private Map<String, List<String>> indexes(String table) throws SQLException {
        try (Connection con = database().dataSource().getConnection()) {
            DatabaseMetaData md = con.getMetaData();
            for (String spelling : List.of(table, table.toUpperCase(Locale.ROOT))) {
                Map<String, TreeMap<Short, String>> found = new TreeMap<>();
                try (ResultSet rs = md.getIndexInfo(con.getCatalog(), null, spelling, false, false)) {
                    while (rs.next()) {
                        String name = rs.getString("INDEX_NAME");
                        if (name != null && rs.getBoolean("NON_UNIQUE")) {
                            found.computeIfAbsent(name.toLowerCase(Locale.ROOT).replace(table, "t"),
                                    n -> new TreeMap<>()).put(rs.getShort("ORDINAL_POSITION"),
                                    rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
                        }
                    }
                }
                if (!found.isEmpty()) {
                    Map<String, List<String>> indexes = new TreeMap<>();
                    found.forEach((name, columns) -> indexes.put(name, List.copyOf(columns.values())));
                    return indexes;
                }
            }
            return Map.of();
        }
    }
}
