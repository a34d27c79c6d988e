package dev.idempotency.sample.order;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One approval, three layers of retries, one order service that is slower than its client:
 *
 * <pre>
 * agent tool call      2 attempts   backoff 200 ms x 2^n + jitter
 *   API gateway        3 attempts   backoff 100 ms x 2^n + jitter
 *     HTTP client      2 attempts   backoff  50 ms x 2^n + jitter, timeout 500 ms
 *       order service               needs 800 ms, keeps working after the client gave up
 * </pre>
 *
 * Up to 2 x 3 x 2 = 12 requests reach the order service for a single approval.
 */
final class Scenario {

    static final int TOOL_ATTEMPTS = 2;
    static final int GATEWAY_ATTEMPTS = 3;
    static final int HTTP_ATTEMPTS = 2;

    private final OrderService orders;
    private final Timings timings;
    private final PrintStream out;
    private final Random jitter;
    private final Deque<String> path = new ArrayDeque<>();
    private final List<OrderReceipt> answers = new ArrayList<>();
    private final List<OrderReceipt> served = new CopyOnWriteArrayList<>();
    private long start;
    private int attempts;

    Scenario(OrderService orders, Timings timings, PrintStream out, long seed) {
        this.orders = orders;
        this.timings = timings;
        this.out = out;
        this.jitter = new Random(seed);
    }

    /**
     * What happened.
     *
     * @param attempts       requests that reached the order service
     * @param answered       requests whose answer the client received in time
     * @param served         answers the order service produced, for clients that waited or had given up
     * @param ordersWritten  order rows for the approval, once every request the client gave up on has finished
     * @param receipts       the distinct receipts the client received
     * @param servedReceipts the distinct receipts among all the order service's answers
     * @param succeeded      whether the approval's tool call ended with a receipt
     */
    record Report(int attempts, int answered, int served, int ordersWritten, Set<OrderReceipt> receipts,
            Set<OrderReceipt> servedReceipts, boolean succeeded) {
    }

    /** A request the client stopped waiting for, or one the service refused: worth another try. */
    private static final class Failed extends Exception {
        private static final long serialVersionUID = 1L;

        Failed(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    @FunctionalInterface
    private interface Step {
        OrderReceipt call() throws Failed;
    }

    Report run(String approvalNo, OrderRequest request) throws InterruptedException {
        // the order service's request threads: a request runs to its end whether or not its client still waits
        ExecutorService server = Executors.newFixedThreadPool(TOOL_ATTEMPTS * GATEWAY_ATTEMPTS * HTTP_ATTEMPTS);
        start = System.nanoTime();
        boolean succeeded;
        try {
            OrderReceipt receipt = retry("tool", TOOL_ATTEMPTS, timings.toolBackoff(),
                    () -> retry("gateway", GATEWAY_ATTEMPTS, timings.gatewayBackoff(),
                            () -> retry("http", HTTP_ATTEMPTS, timings.httpBackoff(),
                                    () -> send(server, approvalNo, request))));
            log("the tool call succeeded with " + receipt.orderId());
            succeeded = true;
        } catch (Failed e) {
            log("the tool call failed after " + attempts + " requests: " + e.getMessage());
            succeeded = false;
        } finally {
            server.shutdown();
        }
        // the order service finishes what the client gave up on, as it would in production
        if (!server.awaitTermination(1, TimeUnit.MINUTES)) {
            throw new IllegalStateException("the order service did not finish its requests");
        }
        return new Report(attempts, answers.size(), served.size(), orders.ordersFor(approvalNo),
                new LinkedHashSet<>(answers), new LinkedHashSet<>(served), succeeded);
    }

    private OrderReceipt retry(String layer, int maxAttempts, Duration backoff, Step step) throws Failed {
        for (int attempt = 1; ; attempt++) {
            path.addLast(layer + " " + attempt + "/" + maxAttempts);
            try {
                return step.call();
            } catch (Failed e) {
                if (attempt == maxAttempts) {
                    throw e;
                }
                sleep(backoff.multipliedBy(1L << (attempt - 1)).plusNanos((long) (jitter.nextDouble()
                        * backoff.toNanos())));
            } finally {
                path.removeLast();
            }
        }
    }

    private OrderReceipt send(ExecutorService server, String approvalNo, OrderRequest request) throws Failed {
        attempts++;
        Future<OrderReceipt> response = server.submit(() -> {
            OrderReceipt receipt = orders.createOrder(approvalNo, request);
            served.add(receipt);
            return receipt;
        });
        try {
            OrderReceipt receipt = response.get(timings.clientTimeout().toMillis(), TimeUnit.MILLISECONDS);
            answers.add(receipt);
            log("request " + attempts + " [" + String.join(" > ", path) + "] answered " + receipt.orderId());
            return receipt;
        } catch (TimeoutException e) {
            // the request is not cancelled: the service cannot know that its client stopped waiting
            log("request " + attempts + " [" + String.join(" > ", path) + "] timed out after "
                    + timings.clientTimeout().toMillis() + " ms");
            throw new Failed("timed out", e);
        } catch (ExecutionException e) {
            log("request " + attempts + " [" + String.join(" > ", path) + "] failed: " + e.getCause());
            throw new Failed(String.valueOf(e.getCause()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failed("interrupted", e);
        }
    }

    private void sleep(Duration d) throws Failed {
        try {
            Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failed("interrupted", e);
        }
    }

    private void log(String line) {
        out.printf("[%5d ms] %s%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), line);
    }
}
