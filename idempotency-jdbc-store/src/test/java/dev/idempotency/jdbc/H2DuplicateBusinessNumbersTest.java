package dev.idempotency.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

class H2DuplicateBusinessNumbersTest extends AbstractDuplicateBusinessNumbersTest {

    @RegisterExtension
    static final RealDatabase DATABASE = RealDatabase.h2(2);

    @Override
    RealDatabase database() {
        return DATABASE;
    }

    @Override
    String timestampType() {
        return "TIMESTAMP(3) WITH TIME ZONE";
    }
}
