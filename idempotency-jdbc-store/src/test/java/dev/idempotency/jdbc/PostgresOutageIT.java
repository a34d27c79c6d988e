package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outage on PostgreSQL: the test's own role is refused ({@code ALTER ROLE .. NOLOGIN}) and every backend of
 * its pool terminated ({@code pg_terminate_backend}).
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresOutageIT extends AbstractStoreOutageTest {

    @Override
    protected String adminUrl() {
        return System.getenv(RealDatabase.POSTGRES_URL);
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.postgresql();
    }

    @Override
    protected void createLogin(JdbcTemplate admin, String login, String table) {
        admin.execute("CREATE ROLE " + login + " LOGIN");
        admin.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE " + table + " TO " + login);
    }

    @Override
    protected void lockOutAndKill(JdbcTemplate admin, String login) {
        admin.execute("ALTER ROLE " + login + " NOLOGIN");
        admin.queryForList("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ?", login);
    }

    @Override
    protected void allow(JdbcTemplate admin, String login) {
        admin.execute("ALTER ROLE " + login + " LOGIN");
    }

    @Override
    protected void dropLogin(JdbcTemplate admin, String login) {
        admin.execute("DROP OWNED BY " + login);
        admin.execute("DROP ROLE IF EXISTS " + login);
    }
}
