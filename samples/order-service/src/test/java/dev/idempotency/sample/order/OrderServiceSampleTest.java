package dev.idempotency.sample.order;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

/**
 * The sample's story over real HTTP (embedded Tomcat on a free port): one order when protected, one per request when
 * not, and the same key on every request, counted where it arrives.
 */
class OrderServiceSampleTest {

    /**
     * A 1 s client, and backoffs of a few milliseconds; the service's work is held until a point of the story
     * ({@link Scenario.Finish}) rather than for a time, so that a busy machine tells the same story. (Shorter client
     * timeouts are not safe on a loaded machine: a request whose client gives up and resets the connection before
     * Tomcat has read it never reaches the service.)
     */
    static final Timings HELD = new Timings(Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofMillis(5),
            Duration.ofMillis(10), Duration.ofMillis(20));

    @BeforeAll
    static void quiet() {
        OrderServiceSample.quiet();
    }

    final ByteArrayOutputStream output = new ByteArrayOutputStream();
    final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);

    /** The story as the sample printed it, on the test's report when the test fails. */
    @RegisterExtension
    final TestWatcher printTheStory = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.out.println(output.toString(StandardCharsets.UTF_8));
        }
    };

    @Test
    void protectedTheRetriesEndWithOneOrderAndEveryRequestCarriedTheSameKey() throws Exception {
        Scenario.Report report = OrderServiceSample.run(true, HELD, out, Scenario.Finish.AFTER_FIRST_TIMEOUT);

        // the first request timed out, a retry got the first one's answer
        assertThat(report.attempts()).isGreaterThan(1);
        assertThat(report.keysArrived()).hasSize(report.attempts()).containsOnly(report.keysArrived().get(0))
                .doesNotContain("none");
        assertThat(report.ordersWritten()).isEqualTo(1);
        assertThat(report.served()).hasSize(report.attempts());
        assertThat(report.servedOrders()).hasSize(1);
        assertThat(report.served()).filteredOn(a -> a.status() == 201 && !a.replayed()).hasSize(1);
        assertThat(report.replayed()).isPositive();
        assertThat(report.served()).allMatch(OrderServiceSampleTest::placedReplayedOrCutOff);
        assertThat(report.succeeded()).isTrue();
        assertThat(output.toString(StandardCharsets.UTF_8))
                .contains("orders written                          : 1")
                .contains("Idempotent-Replayed: true");
    }

    /** The first request outlasts all twelve: every one of them reaches the service while the first still runs. */
    @Test
    void twelveRequestsThroughThreeLayersCarryOneKeyAndPlaceOneOrder() throws Exception {
        Scenario.Report report = OrderServiceSample.run(true, HELD, out, Scenario.Finish.AFTER_CALLER);

        assertThat(report.attempts()).isEqualTo(12);
        assertThat(report.keysArrived()).hasSize(12).containsOnly(report.keysArrived().get(0));
        assertThat(report.keysArrived().get(0)).matches("\"[0-9a-f-]{36}\"");
        assertThat(report.succeeded()).isFalse();
        assertThat(report.ordersWritten()).isEqualTo(1);
        assertThat(report.served()).hasSize(12);
        assertThat(report.servedOrders()).hasSize(1);
        // the first placed the order; the others waited for it and got its answer, or, past the engine's
        // max-waiters-per-key (8), a 409 at once
        assertThat(report.served()).filteredOn(a -> a.status() == 201 && !a.replayed()).hasSize(1);
        assertThat(report.served()).allMatch(a -> placedReplayedOrCutOff(a) || a.status() == 409);
    }

    /**
     * The order placed, its replay, or a 400 from Tomcat for a request whose body never arrived whole: on a busy
     * machine a client can give up (and close its connection) before the service has read the body it sent.
     */
    static boolean placedReplayedOrCutOff(Arrivals.Arrival a) {
        return a.status() == 201 || a.status() == 400 && a.orderId() == null;
    }

    @Test
    void unprotectedEveryRetryPlacesAnotherOrderThoughTheKeyIsTheSame() throws Exception {
        Scenario.Report report = OrderServiceSample.run(false, HELD, out, Scenario.Finish.AFTER_CALLER);

        assertThat(report.attempts()).isEqualTo(12);
        assertThat(report.keysArrived()).hasSize(12).containsOnly(report.keysArrived().get(0));
        assertThat(report.ordersWritten()).isEqualTo(12);
        assertThat(report.servedOrders()).hasSize(12);
        assertThat(report.replayed()).isZero();
        assertThat(report.answered()).isZero();
        assertThat(report.succeeded()).isFalse();
        // the caller's last word says why it gave up, not an HTTP client's empty message
        assertThat(output.toString(StandardCharsets.UTF_8))
                .contains("the tool call failed after 12 requests: the last request got no answer")
                .doesNotContain(": null");
    }

    @Test
    void theServiceAloneAnswersWhatTheDocsShowWithCurl() {
        try (OrderServer server = OrderServiceSample.serve(0, Timings.STORY.scaled(0.05), out)) {
            RestClient client = RestClient.builder().baseUrl(server.baseUrl())
                    .defaultStatusHandler(status -> true, (request, response) -> { })
                    .build();
            String body = "{\"approvalNo\":\"AP-1\",\"customerId\":\"CUST-42\",\"sku\":\"SKU-7\",\"quantity\":3,"
                    + "\"unitPrice\":19.90}";

            ResponseEntity<String> noKey = client.post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
                    .body(body).retrieve().toEntity(String.class);
            ResponseEntity<String> first = post(client, body);
            ResponseEntity<String> again = post(client, body);
            ResponseEntity<String> otherBody = post(client, body.replace("\"quantity\":3", "\"quantity\":4"));

            assertThat(noKey.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
            assertThat(noKey.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
            assertThat(noKey.getBody()).contains("https://idempotency.dev/problems/missing-key");
            assertThat(first.getStatusCode()).isEqualTo(HttpStatus.CREATED);
            assertThat(first.getHeaders().containsHeader("Idempotent-Replayed")).isFalse();
            assertThat(again.getStatusCode()).isEqualTo(HttpStatus.CREATED);
            assertThat(again.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
            assertThat(again.getBody()).isEqualTo(first.getBody());
            assertThat(again.getHeaders().getLocation()).isEqualTo(first.getHeaders().getLocation());
            assertThat(otherBody.getStatusCode()).isEqualTo(HttpStatus.UNPROCESSABLE_CONTENT);
            List<?> orders = client.get().uri("/orders?approvalNo=AP-1").retrieve().body(List.class);
            assertThat(orders).hasSize(1);
            assertThat(((Map<?, ?>) orders.get(0)).get("orderId")).isEqualTo(
                    first.getHeaders().getLocation().getPath().substring("/orders/".length()));
            assertThat(output.toString(StandardCharsets.UTF_8)).contains("curl -i " + server.baseUrl() + "/orders");

            // the Location of the 201 names a resource that answers
            ResponseEntity<String> placed = client.get().uri(first.getHeaders().getLocation()).retrieve()
                    .toEntity(String.class);
            assertThat(placed.getStatusCode()).isEqualTo(HttpStatus.OK);
            assertThat(placed.getBody()).isEqualTo(first.getBody());
            // Spring MVC's own errors come as problem+json, as the idempotency errors do, never Tomcat's HTML page
            ResponseEntity<String> unknown = client.get().uri("/orders/ORD-NONE").retrieve().toEntity(String.class);
            assertThat(unknown.getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
            assertThat(unknown.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
            assertThat(unknown.getBody()).contains("ORD-NONE");
            ResponseEntity<String> noApproval = client.get().uri("/orders").retrieve().toEntity(String.class);
            assertThat(noApproval.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
            assertThat(noApproval.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
            assertThat(noApproval.getBody()).contains("approvalNo").doesNotContain("<html");
        }
    }

    @Test
    void whatTomcatRefusesBeforeSpringSeesItIsAProblemToo() throws Exception {
        try (OrderServer server = OrderServiceSample.serve(0, Timings.STORY.scaled(0.05), out)) {
            // past Tomcat's 8 KB header limit, and a DEL byte: HTTP clients will not send these, a socket does
            for (byte[] key : List.of("k".repeat(10_000).getBytes(StandardCharsets.US_ASCII),
                    new byte[] {'"', 'k', 0x7f, '"'})) {
                String response = raw(server.port(), key);
                assertThat(response).startsWith("HTTP/1.1 400");
                assertThat(response.toLowerCase(Locale.ROOT))
                        .contains("content-type: application/problem+json").doesNotContain("<html");
            }
        }
    }

    /** A POST of an order with {@code key} as its Idempotency-Key, sent as bytes; the answer as text. */
    private static String raw(int port, byte[] key) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(20_000);
            OutputStream os = socket.getOutputStream();
            os.write("POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: ".getBytes(StandardCharsets.US_ASCII));
            os.write(key);
            os.write("\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
                    .getBytes(StandardCharsets.US_ASCII));
            os.flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            try {
                socket.getInputStream().transferTo(answer);
            } catch (SocketException reset) {
                // the server may close without reading the rest: what arrived is the answer
            }
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    private static ResponseEntity<String> post(RestClient client, String body) {
        return client.post().uri("/orders").contentType(MediaType.APPLICATION_JSON).header("Idempotency-Key", "\"ap-1\"")
                .body(body).retrieve().toEntity(String.class);
    }
}
