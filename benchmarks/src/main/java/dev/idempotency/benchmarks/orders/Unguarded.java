package dev.idempotency.benchmarks.orders;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/** (a) No idempotency: a retry places the order again. */
public class Unguarded implements PlaceOrder {

    private final JdbcTemplate jdbc;
    private final String insert;

    public Unguarded(JdbcTemplate jdbc, OrderTables tables) {
        this.jdbc = jdbc;
        this.insert = tables.insertOrder();
    }

    @Override
    @Transactional
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        return new Receipt(id, orderNo, customer, amountCents);
    }
}
