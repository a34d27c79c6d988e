package dev.idempotency.faults;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The fault suite on PostgreSQL at {@code IDEMPOTENCY_POSTGRES_URL}: connections killed with
 * {@code pg_terminate_backend}, and deadlocks. Skipped without the variable; set, an unreachable database fails it.
 */
@EnabledIfEnvironmentVariable(named = FaultDatabase.POSTGRES_URL, matches = ".+")
class PostgresFaultIT extends AbstractServerFaultSuite {

    @Override
    protected FaultDatabase openDatabase() {
        return FaultDatabase.fromEnvironment(FaultDatabase.Kind.POSTGRESQL, FaultDatabase.POSTGRES_URL, POOL_SIZE);
    }
}
