package dev.idempotency.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MariaDB's transaction suite on a pool whose driver prepares statements on the server
 * ({@code useServerPrepStmts=true}): the claim procedure's {@code CALL} is then a server-prepared statement, and
 * every transaction behaviour (the plain read that takes no lock among them) must hold.
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
