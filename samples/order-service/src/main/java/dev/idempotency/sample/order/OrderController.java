package dev.idempotency.sample.order;

import dev.idempotency.Tier;
import dev.idempotency.web.IdempotentRequest;
import java.net.URI;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The order service's HTTP face. {@code POST /orders} needs an {@code Idempotency-Key} header: the first request with
 * a key places the order and its {@code 201} is recorded in the same transaction; a retry with the key gets that
 * {@code 201} back, byte for byte, with {@code Idempotent-Replayed: true}; a retry that arrives while the first still
 * runs waits for it. Without the {@code IdempotentRequestHandlerAdapter} (the {@code --unprotected} run) the
 * annotation is inert and every request places an order.
 */
@RestController
public class OrderController {

    private final OrderService orders;

    public OrderController(OrderService orders) {
        this.orders = orders;
    }

    @PostMapping("/orders")
    @IdempotentRequest(tier = Tier.REVERSIBLE, ttl = "24h")
    @Transactional
    public ResponseEntity<OrderReceipt> create(@RequestBody OrderRequest request) {
        OrderReceipt receipt = orders.createOrder(request);
        return ResponseEntity.created(URI.create("/orders/" + receipt.orderId())).body(receipt);
    }

    /** The orders of an approval: how many a run of retries placed. */
    @GetMapping("/orders")
    public List<OrderReceipt> list(@RequestParam String approvalNo) {
        return orders.ordersFor(approvalNo);
    }
}
