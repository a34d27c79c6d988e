package dev.idempotency.spring.boot;

import dev.idempotency.jdbc.JdbcIdempotencyAudit;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.boot.IdempotencyProperties.SchemaInitialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.sql.init.DatabaseInitializationSettings;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.jdbc.datasource.init.DatabasePopulatorUtils;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * Creates the JDBC store's table from the script shipped for its database ({@code dev/idempotency/jdbc/schema-*.sql},
 * the very file users copy into their migrations), under the configured table name, when it does not exist yet; and
 * beside it the audit of resolutions by hand ({@code audit-*.sql}, the table's name with {@code _audit} after it).
 * A Spring Boot database initializer: beans that depend on database initialization start after it.
 */
final class IdempotencySchemaInitializer extends DataSourceScriptDatabaseInitializer {

    private static final Log LOG = LogFactory.getLog(IdempotencySchemaInitializer.class);
    private static final String SCRIPT_TABLE = JdbcIdempotencyStore.DEFAULT_TABLE_NAME;
    private static final Pattern SCRIPT_TABLE_WORD = Pattern.compile("\\b" + SCRIPT_TABLE + "\\b");
    /** PostgreSQL's digest domain: a schema object of its own, which goes where the table goes. */
    private static final Pattern SCRIPT_DOMAIN = Pattern.compile("\\b" + SCRIPT_TABLE + "(_sha256)\\b");
    private static final String SCRIPT_AUDIT = JdbcIdempotencyAudit.DEFAULT_TABLE_NAME;
    private static final Pattern SCRIPT_AUDIT_WORD = Pattern.compile("\\b" + SCRIPT_AUDIT + "\\b");
    private static final Pattern CREATE_DOMAIN =
            Pattern.compile("(?i)CREATE\\s+DOMAIN\\s+(\\S+)\\s+AS\\s+(\\w+)[^;]*;\\s*");

    private final JdbcIdempotencyStore store;
    private final SchemaInitialization mode;
    private final DatabaseInitializationSettings settings;

    IdempotencySchemaInitializer(DataSource dataSource, JdbcIdempotencyStore store, SchemaInitialization mode) {
        this(dataSource, store, mode, new DatabaseInitializationSettings());
    }

    private IdempotencySchemaInitializer(DataSource dataSource, JdbcIdempotencyStore store, SchemaInitialization mode,
            DatabaseInitializationSettings settings) {
        super(dataSource, settings);
        this.store = store;
        this.mode = mode;
        this.settings = settings;
        settings.setMode(DatabaseInitializationMode.valueOf(mode.name()));
    }

    SchemaInitialization mode() {
        return mode;
    }

    @Override
    public boolean initializeDatabase() {
        if (mode == SchemaInitialization.NEVER || (mode == SchemaInitialization.EMBEDDED && !isEmbeddedDatabase())) {
            return false;
        }
        // the script is chosen only now: finding the dialect may need a connection
        settings.setSchemaLocations(List.of("classpath:" + store.dialect().schemaLocation()));
        return super.initializeDatabase();
    }

    @Override
    protected void runScripts(Scripts scripts) {
        String table = store.tableName();
        Charset encoding = scripts.getEncoding() != null ? scripts.getEncoding() : StandardCharsets.UTF_8;
        if (tableExists(table)) {
            LOG.debug("The idempotency table " + table + " exists; not creating it");
        } else {
            ResourceDatabasePopulator populator = populator(scripts, encoding);
            for (Resource script : scripts) {
                populator.addScript(script(withoutExistingDomains(rename(read(script, encoding), table)), script,
                        encoding));
            }
            DatabasePopulatorUtils.execute(populator, getDataSource());
            LOG.info("Created the idempotency table " + table + " from " + store.dialect().schemaLocation());
            store.dialect().claimProcedureLocation().ifPresent(location -> createClaimProcedure(location, table));
        }
        createAuditTable(scripts, encoding, JdbcIdempotencyAudit.of(store).tableName());
    }

    /** The audit of resolutions by hand ({@code JdbcIdempotencyAudit.of(store)}), beside the table, if missing. */
    private void createAuditTable(Scripts scripts, Charset encoding, String audit) {
        if (tableExists(audit)) {
            LOG.debug("The idempotency audit table " + audit + " exists; not creating it");
            return;
        }
        Resource script = new ClassPathResource(store.dialect().auditSchemaLocation());
        ResourceDatabasePopulator populator = populator(scripts, encoding);
        populator.addScript(script(renameAudit(read(script, encoding), audit), script, encoding));
        DatabasePopulatorUtils.execute(populator, getDataSource());
        LOG.info("Created the idempotency audit table " + audit + " from " + store.dialect().auditSchemaLocation());
    }

    /** The shipped audit script with {@code audit} in place of {@code idempotency_record_audit}, as {@link #rename}. */
    static String renameAudit(String script, String audit) {
        return renameObject(script, SCRIPT_AUDIT_WORD, SCRIPT_AUDIT, audit);
    }

    private static ResourceDatabasePopulator populator(Scripts scripts, Charset encoding) {
        ResourceDatabasePopulator populator = new ResourceDatabasePopulator();
        populator.setContinueOnError(scripts.isContinueOnError());
        populator.setSeparator(scripts.getSeparator());
        populator.setSqlScriptEncoding(encoding.name());
        return populator;
    }

    private static String read(Resource script, Charset encoding) {
        try {
            return script.getContentAsString(encoding);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + script, e);
        }
    }

    private static Resource script(String sql, Resource from, Charset encoding) {
        return new ByteArrayResource(sql.getBytes(encoding), from.getDescription());
    }

    /**
     * The script without a {@code CREATE DOMAIN} whose domain is there already, over the same type: PostgreSQL's
     * digest domain outlives a table dropped by hand, and the table is then made again of it rather than the start
     * failing on it. A type of that name over another type is left to fail the script, naming it.
     */
    private String withoutExistingDomains(String sql) {
        Matcher m = CREATE_DOMAIN.matcher(sql);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String domain = m.group(1);
            boolean exists = domainOver(domain, m.group(2));
            if (exists) {
                LOG.info("The domain " + domain + " exists; making the idempotency table of it");
            }
            m.appendReplacement(out, exists ? "" : Matcher.quoteReplacement(m.group()));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** Whether {@code domain} exists as a domain over {@code type} (PostgreSQL's catalog; elsewhere, no). */
    private boolean domainOver(String domain, String type) {
        try (Connection con = getDataSource().getConnection();
                PreparedStatement ps = con.prepareStatement("SELECT format_type(typbasetype, NULL) FROM pg_type"
                        + " WHERE oid = to_regtype(?) AND typtype = 'd'")) {
            ps.setString(1, domain);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && type.equalsIgnoreCase(rs.getString(1));
            }
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * The dialect's optional claim procedure (MariaDB's), from its script, which is one statement run whole. Without
     * the right to create routines the store works the same, its claims only cost the server more: a warning, not a
     * failed start.
     */
    private void createClaimProcedure(String location, String table) {
        try (Connection con = getDataSource().getConnection(); Statement st = con.createStatement()) {
            String script = new ClassPathResource(location).getContentAsString(StandardCharsets.UTF_8);
            // in the table's schema, where the store calls it, qualified as the table is
            st.execute(rename(script.replace("PROCEDURE " + SCRIPT_TABLE + "_", "PROCEDURE " + table + "_"), table));
            LOG.info("Created the claim procedure of " + table + " from " + location);
        } catch (SQLException | IOException e) {
            LOG.warn("Could not create the claim procedure of " + table + " from " + location + " (" + e.getMessage()
                    + "): the store works without it, its claims in a caller's transaction cost the server more");
        }
    }

    /**
     * The shipped script with {@code table} in place of {@code idempotency_record}: constraint and index names
     * ({@code idempotency_record_pk}) take the unqualified name, which a schema may not prefix; the domain
     * ({@code idempotency_record_sha256}) the name as it is, so that it is made in the table's schema.
     */
    static String rename(String script, String table) {
        String withDomain = SCRIPT_DOMAIN.matcher(script).replaceAll(Matcher.quoteReplacement(table) + "$1");
        return renameObject(withDomain, SCRIPT_TABLE_WORD, SCRIPT_TABLE, table);
    }

    /**
     * {@code scriptName} (matched as a word by {@code word}) replaced by {@code name}, and the names made of it
     * ({@code scriptName_pk}, {@code scriptName_key}) by the unqualified name's: a schema may not prefix them.
     */
    private static String renameObject(String script, Pattern word, String scriptName, String name) {
        String unqualified = name.substring(name.lastIndexOf('.') + 1);
        String renamed = script.replace(scriptName + "_", unqualified + "_");
        return word.matcher(renamed).replaceAll(Matcher.quoteReplacement(name));
    }

    private boolean tableExists(String table) {
        // the name is a validated identifier (JdbcIdempotencyStore.Builder.tableName), never user input; outside
        // any transaction, a failing query here aborts nothing else
        try (Connection con = getDataSource().getConnection(); Statement st = con.createStatement()) {
            st.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }
}
