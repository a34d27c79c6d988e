package dev.idempotency.mcp;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcDialect;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The MCP adapter on the JDBC store over an embedded H2 of its own. */
class H2McpToolsTest extends AbstractMcpToolsTest {

    private static HikariDataSource pool;

    @BeforeAll
    static void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:mcp-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        config.setMaximumPoolSize(16);
        pool = new HikariDataSource(config);
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    @Override
    DataSource dataSource() {
        return pool;
    }

    @Override
    JdbcDialect dialect() {
        return JdbcDialect.h2();
    }
}
