package dev.idempotency.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * {@link JdbcIdempotencyStore#verifySchema()}: the table exists, has every column of the dialect's shipped script and
 * its primary key. The expected columns are read from that very script, so that the check and the script cannot drift.
 */
final class SchemaVerifier {

    private static final Pattern CREATE_TABLE = Pattern.compile("(?is)CREATE\\s+TABLE\\s+\\S+\\s*\\((.*)\\)");
    private static final Pattern COLUMN = Pattern.compile("(?m)^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s+\\S");
    private static final Pattern PRIMARY_KEY = Pattern.compile("(?i)PRIMARY\\s+KEY\\s*\\(([^)]*)\\)");
    private static final Set<String> NOT_COLUMNS = Set.of("constraint", "primary", "index", "key", "unique", "check",
            "foreign");

    private SchemaVerifier() {
    }

    /**
     * Checks the table, then asks the dialect what it would advise ({@link JdbcDialect#schemaAdvice}).
     *
     * @return what to tell the operator when the table works but lacks what would make it cheaper, else null
     */
    static @Nullable String verify(DataSource dataSource, String table, JdbcDialect dialect) {
        String script = script(dialect);
        Set<String> columns = columns(script);
        Set<String> primaryKey = primaryKey(script);
        String fix = "; create it with the script " + dialect.schemaLocation() + " (in the idempotency-jdbc-store jar;"
                + " copy it into your migrations with " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + " replaced by "
                + table + ")";
        try (Connection con = dataSource.getConnection()) {
            Set<String> found = new TreeSet<>();
            // the table name is a validated identifier (Builder.tableName), never user input
            try (Statement st = con.createStatement();
                    ResultSet rs = st.executeQuery("SELECT * FROM " + table + " WHERE 1 = 0")) {
                ResultSetMetaData md = rs.getMetaData();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    found.add(md.getColumnName(i).toLowerCase(Locale.ROOT));
                }
            } catch (SQLException e) {
                throw new IllegalStateException("JdbcIdempotencyStore: the table " + table + " does not exist (or "
                        + "cannot be read: " + e.getMessage() + ")" + fix, e);
            }
            Set<String> missing = new TreeSet<>(columns);
            missing.removeAll(found);
            if (!missing.isEmpty()) {
                throw new IllegalStateException("JdbcIdempotencyStore: the table " + table + " lacks the column"
                        + (missing.size() == 1 ? " " : "s ") + String.join(", ", missing) + " of "
                        + dialect.schemaLocation() + " (it has " + String.join(", ", found) + "); migrate it to that"
                        + " script");
            }
            Set<String> key = primaryKeyOf(con, table);
            if (!key.equals(primaryKey)) {
                throw new IllegalStateException("JdbcIdempotencyStore: the table " + table + " has "
                        + (key.isEmpty() ? "no primary key" : "the primary key (" + String.join(", ", key) + ")")
                        + " where " + dialect.schemaLocation() + " declares PRIMARY KEY ("
                        + String.join(", ", primaryKey) + "): without it two attempts could both claim one key;"
                        + " migrate it to that script");
            }
            return dialect.schemaAdvice(con, table);
        } catch (SQLException e) {
            throw new IllegalStateException("JdbcIdempotencyStore: cannot check the table " + table + ": "
                    + e.getMessage(), e);
        }
    }

    /** The primary key columns, lower case; empty when none is found under any spelling of the name. */
    private static Set<String> primaryKeyOf(Connection con, String table) throws SQLException {
        DatabaseMetaData md = con.getMetaData();
        int dot = table.lastIndexOf('.');
        String qualifier = dot < 0 ? null : table.substring(0, dot);
        String name = table.substring(dot + 1);
        List<String[]> places = new ArrayList<>(); // {catalog, schema}
        if (qualifier == null) {
            places.add(new String[] {con.getCatalog(), schema(con)});
            places.add(new String[] {con.getCatalog(), null});
        } else {
            places.add(new String[] {null, qualifier});
            places.add(new String[] {qualifier, null}); // MySQL and MariaDB call a database a catalog
        }
        for (String[] place : places) {
            for (String spelling : new LinkedHashSet<>(List.of(name, name.toUpperCase(Locale.ROOT),
                    name.toLowerCase(Locale.ROOT)))) {
                Set<String> key = new TreeSet<>();
                try (ResultSet rs = md.getPrimaryKeys(place[0], place[1], spelling)) {
                    while (rs.next()) {
                        key.add(rs.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
                    }
                }
                if (!key.isEmpty()) {
                    return key;
                }
            }
        }
        return Set.of();
    }

    private static @Nullable String schema(Connection con) {
        try {
            return con.getSchema();
        } catch (SQLException | AbstractMethodError e) {
            return null;
        }
    }

    static Set<String> columns(String script) {
        Set<String> columns = new TreeSet<>();
        Matcher m = COLUMN.matcher(body(script));
        while (m.find()) {
            String word = m.group(1).toLowerCase(Locale.ROOT);
            if (!NOT_COLUMNS.contains(word)) {
                columns.add(word);
            }
        }
        return columns;
    }

    static Set<String> primaryKey(String script) {
        Matcher m = PRIMARY_KEY.matcher(body(script));
        if (!m.find()) {
            throw new IllegalStateException("the shipped script declares no primary key");
        }
        Set<String> key = new TreeSet<>();
        for (String column : m.group(1).split(",")) {
            key.add(column.trim().toLowerCase(Locale.ROOT));
        }
        return key;
    }

    private static String body(String script) {
        // the statement that creates the table (PostgreSQL's script creates a domain first)
        for (String statement : script.replaceAll("(?m)--.*$", "").split(";")) {
            Matcher m = CREATE_TABLE.matcher(statement);
            if (m.find()) {
                return m.group(1);
            }
        }
        throw new IllegalStateException("the shipped script has no CREATE TABLE");
    }

    private static String script(JdbcDialect dialect) {
        try (InputStream in = SchemaVerifier.class.getClassLoader().getResourceAsStream(dialect.schemaLocation())) {
            if (in == null) {
                throw new IllegalStateException("the script " + dialect.schemaLocation() + " is not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + dialect.schemaLocation(), e);
        }
    }
}
