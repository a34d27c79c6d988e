package dev.idempotency.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.SpringTransactionBridge;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * A database for one test: the idempotency table and an effects table (one row per run of a listener, no unique key,
 * so that a second run shows as a second row), both of their own, dropped by {@link #close()}; an executor on it that
 * joins Spring transactions, and the transaction manager the listeners run in.
 */
final class Database implements AutoCloseable {

    static final String POSTGRES_URL = "IDEMPOTENCY_POSTGRES_URL";

    final HikariDataSource dataSource;
    final JdbcTemplate jdbc;
    final DataSourceTransactionManager transactions;
    final IdempotentExecutor executor;
    final String effects;
    private final String table;
    private final JdbcDialect dialect;

    private Database(String url, JdbcDialect dialect) {
        this.dialect = dialect;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(24);
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(10_000);
        this.dataSource = new HikariDataSource(config);
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        this.table = "idem_msg_" + suffix;
        this.effects = "effects_" + suffix;
        String script = script(dialect).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
        this.jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE TABLE " + effects + " (msg VARCHAR(200) NOT NULL)");
        this.transactions = new DataSourceTransactionManager(dataSource);
        this.executor = IdempotentExecutor.builder(JdbcIdempotencyStore.builder(dataSource).tableName(table).build())
                .transactions(SpringTransactionBridge.INSTANCE)
                .build();
    }

    /** An embedded H2 of its own. */
    static Database h2() {
        return new Database("jdbc:h2:mem:msg-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", JdbcDialect.h2());
    }

    /** The machine's PostgreSQL ({@value #POSTGRES_URL}). */
    static Database postgres() {
        return new Database(System.getenv(POSTGRES_URL), JdbcDialect.postgresql());
    }

    /** Records one run of a listener, in the transaction the listener runs in. */
    void effect(String message) {
        jdbc.update("INSERT INTO " + effects + " (msg) VALUES (?)", message);
    }

    int effects() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + effects, Integer.class);
    }

    int distinctEffects() {
        return jdbc.queryForObject("SELECT COUNT(DISTINCT msg) FROM " + effects, Integer.class);
    }

    /** How many keys are recorded (claims included). */
    int keys() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
    }

    @Override
    public void close() {
        dialect.dropStatements(table).forEach(jdbc::execute);
        jdbc.execute("DROP TABLE IF EXISTS " + effects);
        dataSource.close();
    }

    private static String script(JdbcDialect dialect) {
        try (InputStream in = new ClassPathResource(dialect.schemaLocation()).getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + dialect.schemaLocation(), e);
        }
    }
}
