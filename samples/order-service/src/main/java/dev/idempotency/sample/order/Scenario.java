package dev.idempotency.sample.order;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClientException;

/**
 * One approval: the caller's three retry layers against the order service over HTTP, then the order service's own
 * account once it has finished every request, those whose client had given up included.
 */
final class Scenario {

    /** When the order service's work ends. */
    enum Finish {
        /** After {@link Timings#processingTime()}: the story. */
        CLOCK,
        /** When the client has timed out once. */
        AFTER_FIRST_TIMEOUT,
        /** When the caller has made its last attempt. */
        AFTER_CALLER
    }

    private final OrderServer server;
    private final Timings timings;
    private final StoryLog log;
    private final Finish finish;

    Scenario(OrderServer server, Timings timings, StoryLog log, Finish finish) {
        this.server = server;
        this.timings = timings;
        this.log = log;
        this.finish = finish;
    }

    /**
     * What happened.
     *
     * @param attempts      requests the caller sent
     * @param keysArrived   the {@code Idempotency-Key} of every request that reached the order service, in order
     * @param answered      requests whose answer the caller received in time
     * @param served        the order service's answers, for callers that waited or had given up
     * @param ordersWritten order rows for the approval, once every request has finished
     * @param succeeded     whether the tool call ended with a receipt
     */
    record Report(int attempts, List<String> keysArrived, int answered, List<Arrivals.Arrival> served,
            int ordersWritten, boolean succeeded) {

        /** The distinct orders the service's answers name ({@code Location}), replays included. */
        Set<String> servedOrders() {
            Set<String> orders = new LinkedHashSet<>();
            for (Arrivals.Arrival a : served) {
                if (a.orderId() != null) {
                    orders.add(a.orderId());
                }
            }
            return orders;
        }

        long replayed() {
            return served.stream().filter(Arrivals.Arrival::replayed).count();
        }
    }

    Report run(OrderRequest request) throws InterruptedException {
        // the warm-up's last answer may still be on its way out of the filter
        server.arrivals().awaitIdle(Duration.ofMinutes(1));
        server.arrivals().clear();
        server.arrivals().log(log);
        log.restart();
        boolean succeeded;
        int attempts;
        int answered;
        Runnable onTimeout = finish == Finish.AFTER_FIRST_TIMEOUT ? server.orders()::finishNow : () -> { };
        try (Caller caller = new Caller(server.baseUrl(), timings, log, onTimeout)) {
            try {
                OrderReceipt receipt = caller.placeOrder(request);
                log.line("the tool call succeeded with " + receipt.orderId());
                succeeded = true;
            } catch (RestClientException e) {
                log.line("the tool call failed after " + caller.requests() + " requests: " + why(e));
                succeeded = false;
            }
            attempts = caller.requests();
            answered = caller.answered();
        }
        if (finish == Finish.AFTER_CALLER) {
            server.orders().finishNow();
        }
        // the order service finishes what its client gave up on, as it would in production
        server.arrivals().awaitAnswers(attempts, Duration.ofSeconds(5), Duration.ofMinutes(1));
        server.arrivals().log(null);
        return new Report(attempts, server.arrivals().keys(), answered, server.arrivals().answered(),
                server.ordersFor(request.approvalNo()).size(), succeeded);
    }

    /**
     * Why the caller gave up, in words: a timeout's own message is empty or an HTTP client's ("Request cancelled"),
     * so the last request's fate is said instead.
     */
    static String why(RestClientException e) {
        if (e instanceof ResourceAccessException) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return "the last request got no answer in time (" + root.getClass().getSimpleName() + ")";
        }
        return e.getMessage();
    }
}
