package dev.idempotency.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.jdbc.core.JdbcTemplate;

/** The store TCK on H2 (in memory, READ COMMITTED), through a pool as an application would use it. */
class H2StoreTckTest extends AbstractJdbcStoreTck {

    private static HikariDataSource pool;

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:tck-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        config.setMaximumPoolSize(24);
        pool = new HikariDataSource(config);
    }

    @AfterAll
    static void shutdown() {
        new JdbcTemplate(pool).execute("SHUTDOWN");
        pool.close();
    }

    @Override
    protected DataSource dataSource() {
        return pool;
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.h2();
    }

    /** Half the threads: H2 is the quick test loop, and the real databases run the full fuzz. */
    @Override
    protected int threads() {
        return 16;
    }
}
