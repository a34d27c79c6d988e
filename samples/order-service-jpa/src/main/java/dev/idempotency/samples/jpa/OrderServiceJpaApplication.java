package dev.idempotency.samples.jpa;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.DataIntegrityViolationException;

/**
 * The order service on JPA: Spring Boot with {@code idempotency-spring-boot-starter} and
 * {@code spring-boot-starter-data-jpa}, nothing else. Run it with
 * {@code mvn -B -q -pl samples/order-service-jpa -am package -DskipTests exec:java}: it places an order, retries it,
 * and then sends the same order number under another key, which fails at the commit and is not recorded.
 */
@SpringBootApplication
public class OrderServiceJpaApplication {

    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = SpringApplication.run(OrderServiceJpaApplication.class, args)) {
            OrderService orders = context.getBean(OrderService.class);
            OrderRequest request = new OrderRequest("ORD-1001", "espresso machine", 1);
            OrderReceipt first = orders.placeOrder("key-1", request);
            OrderReceipt retry = orders.placeOrder("key-1", request); // the client timed out and sent it again
            System.out.println("first attempt: " + first);
            System.out.println("retry:         " + retry);
            try {
                orders.placeOrder("key-2", request); // a client that made a new key for the same order
            } catch (DataIntegrityViolationException e) {
                System.out.println("another key, same order number: refused at the commit ("
                        + e.getClass().getSimpleName() + "), nothing recorded for key-2");
            }
            System.out.println("orders numbered ORD-1001: " + orders.count("ORD-1001"));
        }
    }
}
