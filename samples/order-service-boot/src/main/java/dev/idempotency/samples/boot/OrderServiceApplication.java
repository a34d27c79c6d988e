package dev.idempotency.samples.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The order service as a Spring Boot application. Nothing here sets up idempotency: the dependencies and
 * {@code application.properties} do. Run it with {@code mvn -B -q -pl samples/order-service-boot -am package -DskipTests exec:java}:
 * it places the same order twice, as a client retrying after a timeout would, and shows that it was placed once.
 */
@SpringBootApplication
public class OrderServiceApplication {

    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = SpringApplication.run(OrderServiceApplication.class, args)) {
            OrderService orders = context.getBean(OrderService.class);
            OrderRequest request = new OrderRequest("APR-1001", "espresso machine", 1);
            OrderReceipt first = orders.createOrder(request);
            OrderReceipt retry = orders.createOrder(request); // the client timed out and sent it again
            System.out.println("first attempt: " + first);
            System.out.println("retry:         " + retry);
            System.out.println("orders in the database: " + orders.count());
        }
    }
}
