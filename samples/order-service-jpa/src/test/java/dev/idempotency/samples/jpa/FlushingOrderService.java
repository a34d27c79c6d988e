package dev.idempotency.samples.jpa;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@link OrderService#placeOrder} as a service that writes before it returns ({@code saveAndFlush}; an
 * {@code IDENTITY} id, which Hibernate inserts at once, does the same): a taken order number fails inside the method,
 * and on PostgreSQL leaves the transaction unable to run another statement.
 */
class FlushingOrderService {

    private final OrderRepository orders;

    FlushingOrderService(OrderRepository orders) {
        this.orders = orders;
    }

    @Idempotent(key = "'FLUSHED:' + #idempotencyKey", tier = Tier.REVERSIBLE)
    @Transactional
    public OrderReceipt placeOrder(String idempotencyKey, OrderRequest request) {
        Order order = orders.saveAndFlush(new Order(request.orderNo(), request.item(), request.quantity()));
        return new OrderReceipt(order.getId(), order.getOrderNo(), order.getItem(), order.getQuantity());
    }
}
