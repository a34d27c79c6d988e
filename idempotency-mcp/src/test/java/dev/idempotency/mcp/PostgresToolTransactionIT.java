package dev.idempotency.mcp;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.jdbc.JdbcDialect;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link ToolTransactionTest} on PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}), on a table of its own per test. */
@EnabledIfEnvironmentVariable(named = PostgresMcpToolsIT.URL, matches = ".+")
class PostgresToolTransactionIT extends ToolTransactionTest {

    private static HikariDataSource postgres;

    @BeforeAll
    static void openPostgres() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv(PostgresMcpToolsIT.URL));
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        config.setInitializationFailTimeout(10_000);
        postgres = new HikariDataSource(config);
    }

    @AfterAll
    static void closePostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    DataSource dataSource() {
        return postgres;
    }

    @Override
    JdbcDialect dialect() {
        return JdbcDialect.postgresql();
    }
}
