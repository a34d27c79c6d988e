package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MariaDB's claim in the caller's transaction is a compound statement, which the server cannot prepare: with the
 * driver's {@code useServerPrepStmts=true} it must still be sent client-prepared, and every transaction behaviour
 * (the plain read that takes no lock among them) must hold: MariaDB's transaction suite on such a pool.
 */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbServerPreparedTransactionIT extends MariaDbTransactionIT {

    @RegisterExtension
    static final RealDatabase serverPrepared = RealDatabase.mariadb(8).withUrlOptions("useServerPrepStmts=true");

    @Override
    protected RealDatabase database() {
        return serverPrepared;
    }
}
