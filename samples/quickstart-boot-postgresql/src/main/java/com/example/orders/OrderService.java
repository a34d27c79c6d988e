package com.example.orders;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OrderService {

    private final JdbcClient jdbc;

    public OrderService(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    @Transactional
    @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
    public OrderReceipt placeOrder(String orderNo, String item, int quantity) {
        GeneratedKeyHolder id = new GeneratedKeyHolder();
        jdbc.sql("INSERT INTO orders (order_no, item, quantity) VALUES (?, ?, ?)")
                .params(orderNo, item, quantity)
                .update(id, "id");
        return new OrderReceipt(orderNo, id.getKey().longValue());
    }
}
