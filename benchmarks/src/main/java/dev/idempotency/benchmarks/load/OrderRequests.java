package dev.idempotency.benchmarks.load;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * The requests of one load step: {@code POST /orders} (guarded) or {@code POST /orders/unguarded} with an
 * {@code Idempotency-Key} and an order whose approval number is the key, to the nodes in turn (request {@code i} to
 * node {@code i mod n}). With 50% duplicates every second request repeats the one before it, key and body: a client's
 * retry, sent one interval after its first attempt, to the next node. Any answer but {@code 201} is a failure.
 */
final class OrderRequests implements OpenLoop.Target {

    private final HttpClient client;
    private final List<URI> nodes;
    private final int duplicatePercent;
    private final String keyPrefix;
    private final Duration timeout;

    /**
     * @param keyPrefix what makes this step's keys its own (a run's steps never share a key)
     * @param timeout   how long a request waits for its answer
     */
    OrderRequests(HttpClient client, List<String> baseUrls, boolean guarded, int duplicatePercent, String keyPrefix,
            Duration timeout) {
        if (duplicatePercent != 0 && duplicatePercent != 50) {
            throw new IllegalArgumentException("duplicates are 0% or 50% (every second request a retry), not "
                    + duplicatePercent + "%");
        }
        if (baseUrls.isEmpty()) {
            throw new IllegalArgumentException("no node to send to");
        }
        this.client = client;
        this.nodes = baseUrls.stream().map(url -> URI.create(url + (guarded ? "/orders" : "/orders/unguarded")))
                .toList();
        this.duplicatePercent = duplicatePercent;
        this.keyPrefix = keyPrefix;
        this.timeout = timeout;
    }

    /** The key of request {@code sequence}: with 50% duplicates, requests 2j and 2j+1 share one. */
    String key(long sequence) {
        return keyPrefix + "-" + (duplicatePercent == 50 ? sequence / 2 : sequence);
    }

    /** Whether request {@code sequence} repeats the one before it (a retry). */
    boolean repeat(long sequence) {
        return duplicatePercent == 50 && sequence % 2 == 1;
    }

    /** The node request {@code sequence} goes to. */
    URI node(long sequence) {
        return nodes.get((int) (sequence % nodes.size()));
    }

    @Override
    public void call(long sequence) throws Exception {
        String key = key(sequence);
        String body = "{\"approvalNo\":\"" + key + "\",\"customerId\":\"CUST-42\",\"sku\":\"SKU-7\",\"quantity\":3,"
                + "\"unitPrice\":19.90}";
        HttpRequest request = HttpRequest.newBuilder(node(sequence))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", "\"" + key + "\"")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 201) {
            String answer = response.body();
            throw new IllegalStateException("HTTP " + response.statusCode() + " from " + request.uri() + ": "
                    + (answer.length() > 80 ? answer.substring(0, 80) : answer));
        }
    }
}
