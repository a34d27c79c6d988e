package dev.idempotency.faults;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The fault suite on MariaDB at {@code IDEMPOTENCY_MARIADB_URL}: connections killed with {@code KILL}, and InnoDB
 * deadlocks. Skipped without the variable; set, an unreachable database fails it.
 */
@EnabledIfEnvironmentVariable(named = FaultDatabase.MARIADB_URL, matches = ".+")
class MariaDbFaultIT extends AbstractServerFaultSuite {

    @Override
    protected FaultDatabase openDatabase() {
        return FaultDatabase.fromEnvironment(FaultDatabase.Kind.MARIADB, FaultDatabase.MARIADB_URL, POOL_SIZE);
    }
}
