package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The store TCK on MariaDB, REPEATABLE READ (InnoDB's default, set explicitly): the fuzz inside outer transactions is also a deadlock test. */
@EnabledIfEnvironmentVariable(named = TestDatabases.MARIADB_URL, matches = ".+")
class MariaDbStoreTckIT extends AbstractJdbcStoreTck {

    private static HikariDataSource pool;

    @BeforeAll
    static void connect() {
        pool = TestDatabases.pool(TestDatabases.MARIADB_URL, 36, "TRANSACTION_REPEATABLE_READ");
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
        return JdbcDialect.mysql();
    }
}
