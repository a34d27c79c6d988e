package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.store.IdempotencyStore;
import java.util.ArrayList;
import java.util.List;

/**
 * One real database for one suite class: a small pool on the URL of an environment variable, a fresh table per test
 * from the dialect's shipped script, every table dropped at the end. An unreachable database fails the test.
 */
final class RealDatabase implements AutoCloseable {

    private final HikariDataSource dataSource;
    private final JdbcDialect dialect;
    private final List<String> tables = new ArrayList<>();

    RealDatabase(String environmentVariable, JdbcDialect dialect) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv(environmentVariable));
        config.setMaximumPoolSize(4);
        this.dataSource = new HikariDataSource(config);
        this.dialect = dialect;
    }

    /** A store on a new table of its own. */
    IdempotencyStore newStore() {
        String table = TestSchema.uniqueTableName();
        TestSchema.create(dataSource, dialect, table);
        tables.add(table);
        return JdbcIdempotencyStore.builder(dataSource).tableName(table).build();
    }

    /** Drops this suite's tables. */
    void dropTables() {
        tables.forEach(t -> TestSchema.drop(dataSource, t));
        tables.clear();
    }

    @Override
    public void close() {
        dropTables();
        dataSource.close();
    }
}
