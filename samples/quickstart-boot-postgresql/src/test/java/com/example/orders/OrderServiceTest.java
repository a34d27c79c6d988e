package com.example.orders;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;

@SpringBootTest
class OrderServiceTest {

    @Autowired
    OrderService orders;

    @Autowired
    JdbcClient jdbc;

    @Test
    void aRetryWithTheSameOrderNumberReplaysTheFirstReceipt() {
        OrderReceipt first = orders.placeOrder("A-1001", "book", 2);
        OrderReceipt retry = orders.placeOrder("A-1001", "book", 2);

        assertThat(retry).isEqualTo(first);
        assertThat(jdbc.sql("SELECT COUNT(*) FROM orders WHERE order_no = ?").param("A-1001")
                .query(Long.class).single()).isEqualTo(1L);
    }
}
