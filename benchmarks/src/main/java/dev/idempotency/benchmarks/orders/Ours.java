package dev.idempotency.benchmarks.orders;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * (b) This library, as a user writes it: {@code @Idempotent} beside {@code @Transactional}; the aspect runs inside the
 * transaction and the JDBC store claims the key on the transaction's connection.
 */
public class Ours implements PlaceOrder {

    private final JdbcTemplate jdbc;
    private final String insert;

    public Ours(JdbcTemplate jdbc, OrderTables tables) {
        this.jdbc = jdbc;
        this.insert = tables.insertOrder();
    }

    @Override
    @Transactional
    @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE, operation = "Ours.placeOrder")
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        return new Receipt(id, orderNo, customer, amountCents);
    }
}
