package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The store TCK on PostgreSQL, READ COMMITTED (the default, set explicitly). */
@EnabledIfEnvironmentVariable(named = TestDatabases.POSTGRES_URL, matches = ".+")
class PostgresStoreTckIT extends AbstractJdbcStoreTck {

    private static HikariDataSource pool;

    @BeforeAll
    static void connect() {
        pool = TestDatabases.pool(TestDatabases.POSTGRES_URL, 36, "TRANSACTION_READ_COMMITTED");
    }

    @AfterAll
    static void disconnect() {
        pool.close();
    }

    @Override
    protected DataSource dataSource() {
        return pool;
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.postgresql();
    }
}
