package dev.idempotency.benchmarks.orders;

import org.apache.camel.spi.IdempotentRepository;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * (e) Apache Camel's JDBC idempotent repository as the guard, as its Idempotent Consumer uses it: {@code add(key)}
 * (a {@code SELECT COUNT(*)} then an {@code INSERT}, in a {@code TransactionTemplate} that joins ours). Camel keeps the
 * key only, so a duplicate is skipped (null), never replayed: it does less than the others on that path.
 */
public class CamelGuarded implements PlaceOrder {

    private final JdbcTemplate jdbc;
    private final IdempotentRepository repository;
    private final String insert;

    public CamelGuarded(JdbcTemplate jdbc, IdempotentRepository repository, OrderTables tables) {
        this.jdbc = jdbc;
        this.repository = repository;
        this.insert = tables.insertOrder();
    }

    @Override
    @Transactional
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        if (!repository.add(orderNo)) {
            return null;
        }
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        return new Receipt(id, orderNo, customer, amountCents);
    }
}
