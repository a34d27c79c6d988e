package dev.idempotency.jdbc;

import org.junit.jupiter.api.extension.RegisterExtension;

class H2AuditTest extends AbstractAuditTest {

    @RegisterExtension
    static final RealDatabase DATABASE = RealDatabase.h2(2);

    @Override
    RealDatabase database() {
        return DATABASE;
    }
}
