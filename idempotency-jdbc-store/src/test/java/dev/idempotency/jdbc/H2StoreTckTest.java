package dev.idempotency.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The store TCK on H2 (in memory, READ COMMITTED), through a pool as an application would use it. */
class H2StoreTckTest extends AbstractJdbcStoreTck {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.h2(24);

    @Override
    protected RealDatabase database() {
        return database;
    }

    /** Half the threads: H2 is the quick test loop, and the real databases run the full fuzz. */
    @Override
    protected int threads() {
        return 16;
    }
}
