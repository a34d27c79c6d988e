package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outage on MariaDB: the test's own user is locked ({@code ALTER USER .. ACCOUNT LOCK}) and every connection of
 * its pool killed ({@code KILL CONNECTION}).
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbOutageIT extends AbstractStoreOutageTest {

    /** TCP from 127.0.0.1 may match either host, whatever the server's name resolution. */
    private static final String[] HOSTS = {"%", "localhost"};

    @Override
    protected String adminUrl() {
        return System.getenv(RealDatabase.MARIADB_URL);
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.mysql();
    }

    @Override
    protected void createLogin(JdbcTemplate admin, String login, String table) {
        for (String host : HOSTS) {
            admin.execute("CREATE USER '" + login + "'@'" + host + "'");
            admin.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO '" + login + "'@'" + host + "'");
        }
    }

    @Override
    protected void lockOutAndKill(JdbcTemplate admin, String login) {
        for (String host : HOSTS) {
            admin.execute("ALTER USER '" + login + "'@'" + host + "' ACCOUNT LOCK");
        }
        for (Long id : admin.queryForList("SELECT id FROM information_schema.processlist WHERE user = ?",
                Long.class, login)) {
            try {
                admin.execute("KILL CONNECTION " + id);
            } catch (org.springframework.dao.DataAccessException gone) {
                // it ended by itself meanwhile
            }
        }
    }

    @Override
    protected void allow(JdbcTemplate admin, String login) {
        for (String host : HOSTS) {
            admin.execute("ALTER USER '" + login + "'@'" + host + "' ACCOUNT UNLOCK");
        }
    }

    @Override
    protected void dropLogin(JdbcTemplate admin, String login) {
        for (String host : HOSTS) {
            admin.execute("DROP USER IF EXISTS '" + login + "'@'" + host + "'");
        }
    }
}
