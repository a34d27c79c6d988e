package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MariaDB's transaction suite without the claim procedure: the claim in the caller's transaction is then a compound
 * statement, which the server cannot prepare, so with the driver's {@code useServerPrepStmts=true} it must still be
 * sent client-prepared, and every transaction behaviour (the plain read that takes no lock among them) must hold.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbCompoundClaimTransactionIT extends MariaDbTransactionIT {

    @RegisterExtension
    static final RealDatabase compound = RealDatabase.mariadb(8).withUrlOptions("useServerPrepStmts=true")
            .withoutClaimProcedure();

    @Override
    protected RealDatabase database() {
        return compound;
    }
}
