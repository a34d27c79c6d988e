package dev.idempotency.mcp;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcDialect;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The MCP adapter on the JDBC store over PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}), each test on a table of its
 * own, dropped afterwards. Where the variable is set, an unreachable database fails the suite.
 */
@EnabledIfEnvironmentVariable(named = PostgresMcpToolsIT.URL, matches = ".+")
class PostgresMcpToolsIT extends AbstractMcpToolsTest {

    static final String URL = "IDEMPOTENCY_POSTGRES_URL";
    private static HikariDataSource pool;

    @BeforeAll
    static void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv(URL));
        config.setMaximumPoolSize(16);
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(10_000);
        pool = new HikariDataSource(config);
    }

    @AfterAll
    static void close() {
        if (pool != null) {
            pool.close();
        }
    }

    @Override
    DataSource dataSource() {
        return pool;
    }

    @Override
    JdbcDialect dialect() {
        return JdbcDialect.postgresql();
    }
}
