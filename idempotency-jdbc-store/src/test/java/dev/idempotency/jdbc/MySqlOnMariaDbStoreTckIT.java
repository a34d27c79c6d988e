package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store TCK with MySQL's dialect ({@code JdbcDialect.mysql()}, {@code schema-mysql.sql}), run on MariaDB, which
 * accepts every statement of it: the statements MySQL 8 keeps (no {@code SET STATEMENT}, no {@code RETURNING}) stay
 * tested without a MySQL server. REPEATABLE READ, as for MariaDB's own dialect.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MySqlOnMariaDbStoreTckIT extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadbAsMySql(36).at("TRANSACTION_REPEATABLE_READ");

    @Override
    protected RealDatabase database() {
        return database;
    }
}
