package dev.idempotency.samples.jpa;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Places orders through JPA: at most once per idempotency key, whatever the client retries. */
@Service
public class OrderService {

    private final OrderRepository orders;

    public OrderService(OrderRepository orders) {
        this.orders = orders;
    }

    /**
     * Places an order. The claim of the key and the recorded receipt are written in this method's JPA transaction,
     * on its connection: they commit with the order, or vanish with it. Hibernate inserts the order when it flushes,
     * before the commit: an order number already taken fails there, and the receipt returned here is then neither
     * replayed nor kept.
     *
     * @param idempotencyKey the client's key for this intent: the same on every retry of it
     * @throws IllegalArgumentException if the quantity is not positive (after the save: the rollback undoes it)
     * @throws org.springframework.dao.DataIntegrityViolationException if the order number is taken (at the commit)
     */
    @Idempotent(key = "'ORDER:' + #idempotencyKey", tier = Tier.REVERSIBLE)
    @Transactional
    public OrderReceipt placeOrder(String idempotencyKey, OrderRequest request) {
        Order order = orders.save(new Order(request.orderNo(), request.item(), request.quantity()));
        if (request.quantity() <= 0) {
            throw new IllegalArgumentException("quantity must be positive, was " + request.quantity());
        }
        return new OrderReceipt(order.getId(), order.getOrderNo(), order.getItem(), order.getQuantity());
    }

    /** How many orders carry this number. */
    public long count(String orderNo) {
        return orders.countByOrderNo(orderNo);
    }
}
