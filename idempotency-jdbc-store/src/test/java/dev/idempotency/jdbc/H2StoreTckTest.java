package dev.idempotency.jdbc;

import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.springframework.jdbc.core.JdbcTemplate;

/** The store TCK on H2 (in memory, READ COMMITTED). */
class H2StoreTckTest extends AbstractJdbcStoreTck {

    private static final JdbcDataSource DATA_SOURCE = new JdbcDataSource();

    static {
        DATA_SOURCE.setURL("jdbc:h2:mem:tck-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    @AfterAll
    static void shutdown() {
        new JdbcTemplate(DATA_SOURCE).execute("SHUTDOWN");
    }

    @Override
    protected DataSource dataSource() {
        return DATA_SOURCE;
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
