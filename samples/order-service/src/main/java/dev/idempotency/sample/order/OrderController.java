package dev.idempotency.sample.order;

import dev.idempotency.Tier;
import dev.idempotency.web.IdempotentRequest;
import java.net.URI;
import java.util.List;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

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

    /** The order a {@code 201}'s {@code Location} names; 404 (problem+json) for an order that does not exist. */
    @GetMapping("/orders/{orderId}")
    public OrderReceipt get(@PathVariable String orderId) {
        return orders.order(orderId).orElseThrow(
                () -> new ErrorResponseException(HttpStatus.NOT_FOUND, ProblemDetail.forStatusAndDetail(
                        HttpStatus.NOT_FOUND, "no order " + orderId), null));
    }

    /**
     * Spring MVC's own errors (a missing {@code approvalNo}, a body that does not parse, a wrong method) as
     * {@code application/problem+json}, the format the idempotency errors of {@code POST /orders} have, instead of the
     * container's HTML page.
     */
    @RestControllerAdvice
    static class Problems extends ResponseEntityExceptionHandler {
    }
}
