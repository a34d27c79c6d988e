package dev.idempotency.faults;

/**
 * The fault suite on H2 (always runs): a file database under target/ in AUTO_SERVER mode, so that the child JVM
 * of the crash test shares it. H2 has no way to kill a session from another one: the injector fails the connection
 * at the chosen step instead (and rolls back its work, as a server does with a session it loses).
 */
class H2FaultTest extends AbstractFaultSuite {

    @Override
    protected FaultDatabase openDatabase() {
        return FaultDatabase.h2(POOL_SIZE);
    }
}
