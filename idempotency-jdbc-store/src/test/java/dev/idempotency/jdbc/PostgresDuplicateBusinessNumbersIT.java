package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresDuplicateBusinessNumbersIT extends AbstractDuplicateBusinessNumbersTest {

    @RegisterExtension
    static final RealDatabase DATABASE = RealDatabase.postgres(2);

    @Override
    RealDatabase database() {
        return DATABASE;
    }

    @Override
    String timestampType() {
        return "TIMESTAMPTZ(3)";
    }
}
