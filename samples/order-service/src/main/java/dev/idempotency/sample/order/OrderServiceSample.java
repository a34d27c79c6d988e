package dev.idempotency.sample.order;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * Runs the story of one approval whose order write is retried by three layers, and prints what happened.
 *
 * <pre>
 * mvn -B -q -pl samples/order-service -am package -DskipTests exec:java                            # protected: one order
 * mvn -B -q -pl samples/order-service -am package -DskipTests exec:java -Dexec.args=--unprotected  # the same, without @Idempotent
 * </pre>
 *
 * {@code -Dsample.unprotected=true} does the same as {@code --unprotected}.
 */
public final class OrderServiceSample {

    /** Held, so that the level set on it stays: Spring's INFO lines would drown the story. */
    private static final Logger SPRING_LOG = Logger.getLogger("org.springframework");

    private OrderServiceSample() {
    }

    public static void main(String[] args) throws InterruptedException {
        SPRING_LOG.setLevel(Level.WARNING);
        boolean unprotected = Arrays.asList(args).contains("--unprotected")
                || Boolean.getBoolean("sample.unprotected");
        Scenario.Report report = run(!unprotected, Timings.STORY, System.out, System.nanoTime());
        boolean asExpected = unprotected ? report.ordersWritten() > 1
                : report.ordersWritten() == 1 && report.servedReceipts().size() == 1 && report.succeeded();
        if (!asExpected) {
            System.exit(1);
        }
    }

    /** Runs the scenario once in a fresh context and prints the report. */
    static Scenario.Report run(boolean protect, Timings timings, PrintStream out, long seed)
            throws InterruptedException {
        out.println();
        out.println("One approval. The HTTP client times out at " + timings.clientTimeout().toMillis()
                + " ms; the order service needs " + timings.processingTime().toMillis() + " ms.");
        out.println("Retries: tool " + Scenario.TOOL_ATTEMPTS + " x gateway " + Scenario.GATEWAY_ATTEMPTS
                + " x HTTP client " + Scenario.HTTP_ATTEMPTS + " = up to "
                + Scenario.TOOL_ATTEMPTS * Scenario.GATEWAY_ATTEMPTS * Scenario.HTTP_ATTEMPTS
                + " requests, exponential backoff with jitter.");
        out.println(protect ? "The order service is protected by @Idempotent (JDBC store, embedded H2)."
                : "UNPROTECTED: the same order service, without @EnableIdempotency.");
        out.println();
        Scenario.Report report;
        try (AnnotationConfigApplicationContext context = SampleConfiguration.start(protect, timings)) {
            OrderService orders = context.getBean(OrderService.class);
            OrderRequest request = new OrderRequest("CUST-42", "SKU-7", 3, new BigDecimal("19.90"));
            // a service in production is warm: an earlier approval, and its retry, loaded the classes and code paths
            orders.createOrder("AP-2024-0041", request);
            orders.createOrder("AP-2024-0041", request);
            report = new Scenario(orders, timings, out, seed).run("AP-2024-0042", request);
        }
        out.println();
        out.println("requests sent to the order service    : " + report.attempts());
        out.println("answers the client received in time   : " + report.answered());
        out.println("answers the order service produced    : " + report.served()
                + " (also for requests whose client had given up)");
        out.println("distinct receipts among those answers : " + report.servedReceipts().size()
                + (report.servedReceipts().isEmpty() ? "" : " " + report.servedReceipts().stream()
                        .map(OrderReceipt::orderId).collect(Collectors.joining(", ", "(", ")"))));
        out.println("orders written                        : " + report.ordersWritten());
        out.println(report.ordersWritten() == 1 ? "=> exactly one order, whatever the retries."
                : "=> " + report.ordersWritten() + " orders for ONE approval: every retry wrote again.");
        return report;
    }
}
