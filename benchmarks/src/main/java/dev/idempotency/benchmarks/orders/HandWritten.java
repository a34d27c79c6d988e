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

    public HandWritten(JdbcTemplate jdbc, JsonMapper json, OrderTables tables) {
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
    }

    @Override
    @Transactional
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        if (jdbc.update(claim, orderNo) == 0) {
            String recorded = jdbc.queryForObject(read, String.class, orderNo);
            return json.readValue(recorded, Receipt.class);
        }
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        Receipt receipt = new Receipt(id, orderNo, customer, amountCents);
        jdbc.update(complete, json.writeValueAsString(receipt), orderNo);
        return receipt;
    }
}
