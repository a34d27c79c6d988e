package dev.idempotency.sample.messaging;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.jdbc.core.JdbcTemplate;

/** The listener: ships an order, one row per shipment. It knows nothing of idempotency. */
class Shipments {

    private final JdbcTemplate jdbc;

    Shipments(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @RabbitListener(id = "shipments", queues = "${sample.queue}", containerFactory = "idempotentFactory")
    void ship(String orderNo) throws InterruptedException {
        jdbc.update("INSERT INTO shipments (order_no) VALUES (?)", orderNo);
        Thread.sleep(5); // the work: long enough for the kill to land while messages are in flight
    }
}
