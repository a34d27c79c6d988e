package dev.idempotency.sample.order;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;

/**
 * Runs the story of one approval whose order is placed over HTTP through three retry layers, and prints what
 * happened; or starts the order service alone, for {@code curl}.
 *
 * <pre>
 * mvn -B -q -pl samples/order-service -am package -DskipTests exec:java                             # one order
 * mvn -B -q -pl samples/order-service -am package -DskipTests exec:java -Dexec.args=--unprotected   # the duplicates
 * mvn -B -q -pl samples/order-service -am package -DskipTests exec:java -Dexec.args="serve 8080"    # the service alone
 * </pre>
 *
 * {@code -Dsample.unprotected=true} does the same as {@code --unprotected}.
 */
public final class OrderServiceSample {

    /** Held, so that the levels set on them stay: Spring's and Tomcat's INFO lines would drown the story. */
    private static final Logger ROOT_LOG = Logger.getLogger("");
    private static final Logger LIBRARY_LOG = Logger.getLogger("dev.idempotency");

    static final String APPROVAL = "AP-2024-0042";

    private OrderServiceSample() {
    }

    public static void main(String[] args) throws InterruptedException {
        quiet();
        List<String> arguments = Arrays.asList(args);
        if (!arguments.isEmpty() && arguments.get(0).equals("serve")) {
            int port = arguments.size() > 1 ? parsePort(arguments.get(1)) : 8080;
            OrderServer server = serve(port, Timings.STORY, System.out);
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
            Thread.currentThread().join();   // until Ctrl-C
            return;
        }
        boolean unprotected = arguments.contains("--unprotected") || Boolean.getBoolean("sample.unprotected");
        Scenario.Report report = run(!unprotected, Timings.STORY, System.out);
        boolean asExpected = unprotected ? report.ordersWritten() > 1
                : report.ordersWritten() == 1 && report.servedOrders().size() == 1 && report.succeeded()
                        && new LinkedHashSet<>(report.keysArrived()).size() == 1;
        if (!asExpected) {
            System.exit(1);
        }
    }

    /** Spring's and Tomcat's INFO lines off (the library's one startup line stays): the story is what it prints. */
    static void quiet() {
        ROOT_LOG.setLevel(Level.WARNING);
        LIBRARY_LOG.setLevel(Level.INFO);
    }

    private static int parsePort(String port) {
        try {
            return Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("serve takes a port number (0 for a free one), not '" + port + "'", e);
        }
    }

    /** Runs the story once against a fresh order service on a free port, and prints the report. */
    static Scenario.Report run(boolean protect, Timings timings, PrintStream out) throws InterruptedException {
        return run(protect, timings, out, Scenario.Finish.CLOCK);
    }

    /** The same, with the service's work ending at {@code finish} (the tests) instead of by the clock. */
    static Scenario.Report run(boolean protect, Timings timings, PrintStream out, Scenario.Finish finish)
            throws InterruptedException {
        out.println();
        out.println("One approval. The HTTP client times out at " + timings.clientTimeout().toMillis()
                + " ms; the order service needs " + timings.processingTime().toMillis() + " ms.");
        out.println("Retries: tool " + Caller.TOOL_ATTEMPTS + " x gateway " + Caller.GATEWAY_ATTEMPTS
                + " x HTTP client " + Caller.HTTP_ATTEMPTS + " = up to "
                + Caller.TOOL_ATTEMPTS * Caller.GATEWAY_ATTEMPTS * Caller.HTTP_ATTEMPTS
                + " requests over HTTP, Spring's retry with exponential backoff and jitter.");
        out.println(protect ? "The order service (embedded Tomcat, H2) guards POST /orders with @IdempotentRequest."
                : "UNPROTECTED: the same order service without @EnableIdempotency and the "
                        + "IdempotentRequestHandlerAdapter: the Idempotency-Key arrives and nobody reads it.");
        Scenario.Report report;
        try (OrderServer server = OrderServer.start(0, protect, timings)) {
            out.println("The order service listens on " + server.baseUrl() + ".");
            out.println();
            if (finish == Scenario.Finish.CLOCK) {
                warmUp(server);
            }
            report = new Scenario(server, timings, new StoryLog(out), finish).run(request(APPROVAL));
        }
        out.println();
        List<String> keys = report.keysArrived();
        int distinctKeys = new LinkedHashSet<>(keys).size();
        out.println("requests the caller sent                : " + report.attempts());
        out.println("requests that reached the order service : " + keys.size() + ", with " + distinctKeys
                + (distinctKeys == 1 ? " Idempotency-Key, " + keys.get(0) : " distinct Idempotency-Keys"));
        out.println("answers the caller received in time     : " + report.answered());
        out.println("answers the order service produced      : " + report.served().size() + ", "
                + report.replayed() + " of them replays (also for requests whose caller had given up)");
        out.println("distinct orders among those answers     : " + report.servedOrders().size()
                + (report.servedOrders().isEmpty() ? "" : " " + report.servedOrders()));
        out.println("orders written                          : " + report.ordersWritten());
        out.println(report.ordersWritten() == 1 ? "=> exactly one order, whatever the retries."
                : "=> " + report.ordersWritten() + " orders for ONE approval: every retry placed another.");
        return report;
    }

    /**
     * Starts the order service alone, protected, and prints how to talk to it.
     *
     * @param port the port to listen on (127.0.0.1); 0 for a free one
     */
    static OrderServer serve(int port, Timings timings, PrintStream out) {
        OrderServer server = OrderServer.start(port, true, timings);
        server.arrivals().log(new StoryLog(out));
        String url = server.baseUrl() + "/orders";
        out.println("The order service listens on " + server.baseUrl() + " (POST /orders takes "
                + timings.processingTime().toMillis() + " ms). In another shell:");
        out.println("  B='{\"approvalNo\":\"AP-1\",\"customerId\":\"CUST-42\",\"sku\":\"SKU-7\",\"quantity\":3,"
                + "\"unitPrice\":19.90}'");
        out.println("  curl -i " + url + " -H 'Content-Type: application/json' -d \"$B\"                             "
                + "# 400 missing-key");
        out.println("  curl -i " + url + " -H 'Content-Type: application/json' -H 'Idempotency-Key: \"ap-1\"' -d \"$B\""
                + "  # 201; again: the same 201, Idempotent-Replayed: true");
        out.println("  curl '" + url + "?approvalNo=AP-1'"
                + "                                                                   # one order");
        out.println("Ctrl-C stops it.");
        return server;
    }

    static OrderRequest request(String approvalNo) {
        return new OrderRequest(approvalNo, "CUST-42", "SKU-7", 3, new BigDecimal("19.90"));
    }

    /** A service in production is warm: an earlier approval, and its retry, loaded the classes and code paths. */
    private static void warmUp(OrderServer server) {
        RestClient client = RestClient.builder().baseUrl(server.baseUrl()).build();
        for (int i = 0; i < 2; i++) {
            client.post().uri("/orders").header("Idempotency-Key", "warm-up").contentType(MediaType.APPLICATION_JSON)
                    .body(request("AP-2024-0041")).retrieve().toBodilessEntity();
        }
    }
}
