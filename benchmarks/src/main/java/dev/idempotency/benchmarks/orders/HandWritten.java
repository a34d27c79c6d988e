package dev.idempotency.benchmarks.orders;

import dev.idempotency.benchmarks.Database;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.json.JsonMapper;

/**
 * (c) The floor: the guard a careful developer writes by hand, in the business transaction. Claim the key with an
 * insert that cannot fail on a duplicate, run the business write, record the result; a duplicate reads the result
 * back. No fingerprint, no lease, no hashing, no listener: the least a correct guard costs.
 */
public class HandWritten implements PlaceOrder {

    private final JdbcTemplate jdbc;
    private final JsonMapper json;
    private final String insert;
    private final String claim;
    private final String complete;
    private final String read;
    private final boolean withLockTimeout;
    private final boolean mariadb;

    /**
     * @param withLockTimeout surround the claim with the statements the JDBC store adds to give it its own lock
     *                        timeout (guard (f), an experiment)
     */
    public HandWritten(JdbcTemplate jdbc, JsonMapper json, OrderTables tables, boolean withLockTimeout) {
        this.jdbc = jdbc;
        this.json = json;
        this.insert = tables.insertOrder();
        String t = tables.guard();
        // a conflicting insert must not abort the transaction (PostgreSQL) nor raise: ignore it and read the row
        this.claim = tables.db() == Database.MARIADB
                ? "INSERT IGNORE INTO " + t + " (idem_key, status) VALUES (?, 'IN_FLIGHT')"
                : "INSERT INTO " + t + " (idem_key, status) VALUES (?, 'IN_FLIGHT') ON CONFLICT DO NOTHING";
        this.complete = "UPDATE " + t + " SET status = 'COMPLETED', result = ? WHERE idem_key = ?";
        this.read = "SELECT result FROM " + t + " WHERE idem_key = ?";
        this.withLockTimeout = withLockTimeout;
        this.mariadb = tables.db() == Database.MARIADB;
    }

    private int claim(String orderNo) {
        if (!withLockTimeout) {
            return jdbc.update(claim, orderNo);
        }
        // the same statements, one round trip each, that PostgresDialect / MySqlDialect wrap around their claim
        if (mariadb) {
            Long previous = jdbc.queryForObject("SELECT @@SESSION.innodb_lock_wait_timeout", Long.class);
            jdbc.update("SET SESSION innodb_lock_wait_timeout = ?", 10);
            int n = jdbc.update(claim, orderNo);
            jdbc.queryForObject("SELECT @idempotency_claim_token", Long.class);
            jdbc.update("SET SESSION innodb_lock_wait_timeout = ?", previous);
            return n;
        }
        String previous = jdbc.queryForObject("SELECT current_setting('lock_timeout')", String.class);
        jdbc.execute("SAVEPOINT claim");
        jdbc.queryForObject("SELECT set_config('lock_timeout', ?, true)", String.class, "10000ms");
        int n = jdbc.update(claim, orderNo);
        jdbc.queryForObject("SELECT set_config('lock_timeout', ?, true)", String.class, previous);
        jdbc.execute("RELEASE SAVEPOINT claim");
        return n;
    }

    @Override
    @Transactional
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        if (claim(orderNo) == 0) {
            String recorded = jdbc.queryForObject(read, String.class, orderNo);
            return json.readValue(recorded, Receipt.class);
        }
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        Receipt receipt = new Receipt(id, orderNo, customer, amountCents);
        jdbc.update(complete, json.writeValueAsString(receipt), orderNo);
        return receipt;
    }
}
