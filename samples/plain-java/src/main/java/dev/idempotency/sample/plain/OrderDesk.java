package dev.idempotency.sample.plain;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * The service: {@link #checkout} is what callers reach; it places the order through its own private
 * {@code @Idempotent} method, a call through {@code this} that a Spring proxy would never see. AspectJ weaves the guard
 * into {@link #placeOrder} itself, so it is guarded however it is called.
 */
public class OrderDesk {

    /** The reply of a call got lost on its way back: the caller cannot tell whether the order was placed. */
    public static final class ReplyLostException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ReplyLostException(String message) {
            super(message);
        }
    }

    private final DataSource dataSource;
    private final BooleanSupplier replyLost;

    /**
     * @param dataSource the orders table
     * @param replyLost  whether the network loses the reply of this call (after the order was written)
     */
    public OrderDesk(DataSource dataSource, BooleanSupplier replyLost) {
        this.dataSource = dataSource;
        this.replyLost = replyLost;
    }

    /** Places the order of a cart; the cart id is the key, made once by the caller, outside its retry loop. */
    public String checkout(String cartId, int items) {
        String orderId = placeOrder(cartId, items);
        if (replyLost.getAsBoolean()) {
            throw new ReplyLostException("the reply for " + cartId + " was lost on its way back");
        }
        return orderId;
    }

    @Idempotent(key = "'CART:' + #cartId", tier = Tier.REVERSIBLE, ttl = "24h")
    private String placeOrder(String cartId, int items) {
        String orderId = "ORD-" + cartId + "-" + System.nanoTime();
        try (Connection c = dataSource.getConnection();
                PreparedStatement insert = c.prepareStatement(
                        "INSERT INTO orders (order_id, cart_id, items) VALUES (?, ?, ?)")) {
            insert.setString(1, orderId);
            insert.setString(2, cartId);
            insert.setInt(3, items);
            insert.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("could not write the order of " + cartId, e);
        }
        return orderId;
    }
}
