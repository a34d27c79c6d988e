package dev.idempotency.benchmarks.orders;

import org.springframework.integration.metadata.ConcurrentMetadataStore;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.json.JsonMapper;

/**
 * (d) Spring Integration's metadata store as the guard: {@code putIfAbsent(key, "")} claims, {@code replace} records
 * the result, and a duplicate gets the recorded value back from {@code putIfAbsent}. The store is a Spring bean, so
 * its own {@code @Transactional} methods join the business transaction.
 */
public class SpringIntegrationGuarded implements PlaceOrder {

    private static final String IN_FLIGHT = "";

    private final JdbcTemplate jdbc;
    private final JsonMapper json;
    private final ConcurrentMetadataStore store;
    private final String insert;

    public SpringIntegrationGuarded(JdbcTemplate jdbc, JsonMapper json, ConcurrentMetadataStore store,
            OrderTables tables) {
        this.jdbc = jdbc;
        this.json = json;
        this.store = store;
        this.insert = tables.insertOrder();
    }

    @Override
    @Transactional
    public Receipt placeOrder(String orderNo, String customer, long amountCents) {
        String recorded = store.putIfAbsent(orderNo, IN_FLIGHT);
        if (recorded != null) {
            if (recorded.isEmpty()) {
                throw new IllegalStateException("order " + orderNo + " is in flight in another transaction");
            }
            return json.readValue(recorded, Receipt.class);
        }
        Long id = jdbc.queryForObject(insert, Long.class, orderNo, customer, amountCents);
        Receipt receipt = new Receipt(id, orderNo, customer, amountCents);
        store.replace(orderNo, IN_FLIGHT, json.writeValueAsString(receipt));
        return receipt;
    }
}
