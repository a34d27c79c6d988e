package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.ResolvedBy;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code Idempotency-Key} header over real HTTP: the order service on an embedded Tomcat on a free port, called
 * with {@link HttpClient}, on the database a subclass names.
 */
abstract class AbstractIdempotentRequestTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String BODY = "{\"item\":\"book\",\"quantity\":2}";

    static OrderServer server;
    static String base;
    static String table;
    static OrderApp.Probe orders;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static void start(String... properties) {
        server = OrderServer.start(properties);
        base = server.base;
        table = server.table;
        orders = server.probe;
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void reset() {
        orders.executions.set(0);
        orders.keysSeen.clear();
        orders.entered = new CountDownLatch(1);
        orders.release = new CountDownLatch(0);
        orders.status = 201;
        orders.keysArrived.clear();
        orders.jdbc.update("delete from " + orders.table);
    }

    HttpResponse<byte[]> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static String newKey() {
        return UUID.randomUUID().toString();
    }

    static JsonNode json(HttpResponse<byte[]> response) {
        return JSON.readTree(response.body());
    }

    static void assertProblem(HttpResponse<byte[]> response, int status, java.net.URI type) {
        assertThat(response.statusCode()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = json(response);
        assertThat(problem.get("type").asString()).isEqualTo(type.toString());
        assertThat(problem.get("status").asInt()).isEqualTo(status);
        assertThat(problem.get("title").asString()).isNotBlank();
    }

    @Test
    void aRetryGetsTheFirstResponseByteForByteWithTheReplayedHeader() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = post("/orders", BODY, "Idempotency-Key", '"' + key + '"');
        HttpResponse<byte[]> retry = post("/orders", BODY, "Idempotency-Key", '"' + key + '"');

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        // a header outside the allow-list is not recorded
        assertThat(retry.headers().firstValue("X-Not-Replayed")).isEmpty();
        assertThat(orders.executions).hasValue(1);
        assertThat(orders.count()).isEqualTo(1);
    }

    @Test
    void aBareTokenIsTheSameKeyAsItsSfString() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = post("/orders", BODY, "Idempotency-Key", key);
        HttpResponse<byte[]> retry = post("/orders", BODY, "Idempotency-Key", '"' + key + '"');

        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void theSameJsonWrittenAnotherWayIsTheSameRequest() throws Exception {
        String key = newKey();
        post("/orders", BODY, "Idempotency-Key", key);
        HttpResponse<byte[]> retry = post("/orders", "{ \"quantity\" : 2,\n \"item\" : \"book\" }", "Idempotency-Key", key);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aMissingKeyIs400() throws Exception {
        HttpResponse<byte[]> response = post("/orders", BODY);

        assertProblem(response, 400, IdempotencyProblems.MISSING_KEY);
        assertThat(json(response).get("instance").asString()).isEqualTo("/orders");
        assertThat(json(response).get("detail").asString()).contains("Idempotency-Key");
        assertThat(orders.executions).hasValue(0);
    }

    @Test
    void withoutARequiredKeyTheMethodRunsEveryTime() throws Exception {
        post("/optional", "{}");
        HttpResponse<byte[]> second = post("/optional", "{}");

        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(json(second).get("n").asInt()).isEqualTo(2);
    }

    @Test
    void theSameKeyWithAnotherBodyIs422() throws Exception {
        String key = newKey();
        post("/orders", BODY, "Idempotency-Key", key);
        HttpResponse<byte[]> other = post("/orders", "{\"item\":\"pen\",\"quantity\":2}", "Idempotency-Key", key);

        assertProblem(other, 422, IdempotencyProblems.KEY_REUSED);
        assertThat(json(other).get("detail").asString()).doesNotContain("pen");
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void theSameKeyWithAnotherChosenParameterOrPathIs422() throws Exception {
        String key = newKey();
        post("/orders?currency=EUR", BODY, "Idempotency-Key", key);

        assertProblem(post("/orders?currency=USD", BODY, "Idempotency-Key", key), 422, IdempotencyProblems.KEY_REUSED);
        assertProblem(post("/optional", BODY, "Idempotency-Key", key), 422, IdempotencyProblems.KEY_REUSED);
        // a parameter that was not chosen does not count
        assertThat(post("/orders?currency=EUR&trace=2", BODY, "Idempotency-Key", key).headers()
                .firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aDuplicateWhileTheFirstIsInFlightIs409WithRetryAfterThenTheReplay() throws Exception {
        String key = newKey();
        orders.release = new CountDownLatch(1);
        CompletableFuture<HttpResponse<byte[]>> first = CompletableFuture.supplyAsync(() -> {
            try {
                return post("/orders", BODY, "Idempotency-Key", key);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(orders.entered.await(10, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> duplicate = post("/orders", BODY, "Idempotency-Key", key);
        orders.release.countDown();
        HttpResponse<byte[]> firstResponse = first.get(20, TimeUnit.SECONDS);
        HttpResponse<byte[]> after = post("/orders", BODY, "Idempotency-Key", key);

        assertProblem(duplicate, 409, IdempotencyProblems.IN_FLIGHT);
        assertThat(duplicate.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(firstResponse.statusCode()).isEqualTo(201);
        assertThat(after.body()).isEqualTo(firstResponse.body());
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void concurrentDuplicatesGet409OrTheReplayNeverASecondExecution() throws Exception {
        String key = newKey();
        orders.release = new CountDownLatch(1);
        List<CompletableFuture<HttpResponse<byte[]>>> calls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            calls.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return post("/orders", BODY, "Idempotency-Key", key);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        assertThat(orders.entered.await(10, TimeUnit.SECONDS)).isTrue();
        orders.release.countDown();
        List<HttpResponse<byte[]>> responses = new ArrayList<>();
        for (CompletableFuture<HttpResponse<byte[]>> call : calls) {
            responses.add(call.get(20, TimeUnit.SECONDS));
        }
        HttpResponse<byte[]> executed = responses.stream()
                .filter(r -> r.statusCode() == 201 && r.headers().firstValue("Idempotent-Replayed").isEmpty())
                .findFirst().orElseThrow();

        for (HttpResponse<byte[]> r : responses) {
            if (r != executed) {
                assertThat(r.statusCode()).isIn(201, 409);
                if (r.statusCode() == 201) {
                    assertThat(r.headers().firstValue("Idempotent-Replayed")).hasValue("true");
                    assertThat(r.body()).isEqualTo(executed.body());
                }
            }
        }
        assertThat(orders.executions).hasValue(1);
        assertThat(orders.count()).isEqualTo(1);
    }

    @Test
    void twoPrincipalsWithOneKeyAreIsolated() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> alice = post("/orders", BODY, "Idempotency-Key", key, "X-User", "alice");
        HttpResponse<byte[]> bob = post("/orders", BODY, "Idempotency-Key", key, "X-User", "bob");
        HttpResponse<byte[]> aliceAgain = post("/orders", BODY, "Idempotency-Key", key, "X-User", "alice");

        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(bob.body()).isNotEqualTo(alice.body());
        assertThat(aliceAgain.body()).isEqualTo(alice.body());
        assertThat(orders.executions).hasValue(2);
    }

    @Test
    void keysAreLimitedInLengthAndCharacters() throws Exception {
        assertThat(post("/orders", BODY, "Idempotency-Key", "k".repeat(255)).statusCode()).isEqualTo(201);
        assertProblem(post("/orders", BODY, "Idempotency-Key", "k".repeat(256)), 400, IdempotencyProblems.INVALID_KEY);
        assertProblem(post("/orders", BODY, "Idempotency-Key", "\"\""), 400, IdempotencyProblems.INVALID_KEY);
        assertProblem(post("/orders", BODY, "Idempotency-Key", "two words"), 400, IdempotencyProblems.INVALID_KEY);
        assertProblem(post("/orders", BODY, "Idempotency-Key", "\"open"), 400, IdempotencyProblems.INVALID_KEY);
        assertProblem(post("/orders", BODY, "Idempotency-Key", "\"a\";p=1"), 400, IdempotencyProblems.INVALID_KEY);
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aServerErrorIsNotRecordedAndTheRetryRunsAgain() throws Exception {
        String key = newKey();
        orders.status = 503;
        HttpResponse<byte[]> failed = post("/orders", BODY, "Idempotency-Key", key);
        orders.status = 201;
        HttpResponse<byte[]> retry = post("/orders", BODY, "Idempotency-Key", key);

        assertThat(failed.statusCode()).isEqualTo(503);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(orders.executions).hasValue(2);
        // the 5xx's transaction rolled back with its release of the key: only the retry's order is there
        assertThat(orders.count()).isEqualTo(1);
    }

    @Test
    void theClaimIsWrittenInTheControllersTransaction() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> response = post("/claims",
                JSON.writeValueAsString(Map.of("table", table, "key", key)), "Idempotency-Key", key);

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode seen = json(response);
        assertThat(seen.get("inside").asInt()).isEqualTo(1);
        assertThat(seen.get("outside").asInt()).isEqualTo(0);
    }

    @Test
    void aRequestTheApplicationRefusesWithAnExceptionRecordsNothing() throws Exception {
        String key = newKey();
        // JSON, but not an order: the message converter refuses it, the application answers
        HttpResponse<byte[]> refused = post("/orders", "{\"item\":\"book\",\"quantity\":\"two\"}",
                "Idempotency-Key", key);
        HttpResponse<byte[]> retry = post("/orders", BODY, "Idempotency-Key", key);

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(orders.executions).hasValue(1);
    }

    HttpResponse<byte[]> upload(String key, String content) throws Exception {
        String boundary = "b" + UUID.randomUUID().toString().replace("-", "");
        String body = "--" + boundary + "\r\n"
                + "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n";
        return http.send(HttpRequest.newBuilder(URI.create(base + "/uploads"))
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void aMultipartUploadIsFingerprintedByItsParts() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = upload(key, "first file");
        HttpResponse<byte[]> retry = upload(key, "first file");
        HttpResponse<byte[]> other = upload(key, "other file");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertProblem(other, 422, IdempotencyProblems.KEY_REUSED);
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aReplayInsideTheHandlerIsNotAReplayOfTheRequest() throws Exception {
        String sku = "sku-" + newKey();
        HttpResponse<byte[]> first = post("/reservations", "{\"sku\":\"" + sku + "\"}", "Idempotency-Key", newKey());
        HttpResponse<byte[]> second = post("/reservations", "{\"sku\":\"" + sku + "\"}", "Idempotency-Key", newKey());

        // the service's own @Idempotent call replayed in the second request; the request itself ran
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(orders.executions).hasValue(2);
    }

    @Test
    void anOperatorFindsAndEvictsARequestsRecordThroughTheSameAdmin() throws Exception {
        String key = newKey();
        post("/orders", BODY, "Idempotency-Key", key, "X-User", "alice");
        dev.idempotency.IdempotencyAdmin admin = server.context.getBean(dev.idempotency.IdempotencyAdmin.class);
        String stored = IdempotentRequestHandlerAdapter.storedKey("alice", key);

        assertThat(admin.find("http", stored)).isPresent();
        assertThat(admin.find("http", IdempotentRequestHandlerAdapter.storedKey("bob", key))).isEmpty();
        assertThat(admin.evict("http", stored, BY)).isTrue();
        HttpResponse<byte[]> after = post("/orders", BODY, "Idempotency-Key", key, "X-User", "alice");

        assertThat(after.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(orders.executions).hasValue(2);
    }

    @Test
    void aBodyLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        String large = "{\"item\":\"" + "x".repeat(IdempotentRequestHandlerAdapter.DEFAULT_MAX_BODY_SIZE) + "\",\"quantity\":1}";

        assertProblem(post("/orders", large, "Idempotency-Key", newKey()), 413, IdempotencyProblems.BODY_TOO_LARGE);
        assertThat(orders.executions).hasValue(0);
    }

    /** The form of an order with a {@code note} of {@code size} characters. */
    HttpResponse<byte[]> postForm(String key, int noteSize, boolean chunked) throws Exception {
        String form = "item=book&note=" + "n".repeat(noteSize);
        HttpRequest.BodyPublisher body = chunked
                ? HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(form.getBytes(StandardCharsets.US_ASCII)))
                : HttpRequest.BodyPublishers.ofString(form);
        return http.send(HttpRequest.newBuilder(URI.create(base + "/form-orders")).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/x-www-form-urlencoded").header("Idempotency-Key", key)
                .POST(body).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /**
     * Sends {@code head} (the request line and headers, without the blank line) and a JSON body on a plain socket,
     * byte for byte as given, and returns the raw response: for requests {@link HttpClient} refuses to send.
     */
    String raw(byte[] head, String body) throws Exception {
        URI uri = URI.create(base);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(20_000);
            OutputStream out = socket.getOutputStream();
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            try {
                out.write(head);
                out.write(("\r\nHost: " + uri.getHost() + "\r\nContent-Type: application/json\r\nContent-Length: "
                        + bytes.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.flush();
            } catch (java.net.SocketException brokenPipe) {
                // the container answered a head past its limit and closed before reading the rest: read its answer
            }
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            try {
                in.transferTo(response);
            } catch (java.net.SocketException reset) {
                // the server may close without reading the rest of the request: what arrived is the answer
            }
            return response.toString(StandardCharsets.ISO_8859_1);
        }
    }

    static byte[] requestWithKey(byte[] key) {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        head.writeBytes("POST /orders HTTP/1.1\r\nIdempotency-Key: ".getBytes(StandardCharsets.US_ASCII));
        head.writeBytes(key);
        return head.toByteArray();
    }

    /** The raw response is a problem+json of {@code status}: never the container's HTML page. */
    static void assertRawProblem(String response, int status) {
        assertThat(response).startsWith("HTTP/1.1 " + status);
        String head = response.substring(0, response.indexOf("\r\n\r\n")).toLowerCase();
        assertThat(head).contains("content-type: application/problem+json");
        String body = response.substring(response.indexOf("\r\n\r\n") + 4);
        assertThat(body).doesNotContain("<html").doesNotContain("<!doctype").doesNotContain("Exception");
        assertThat(JSON.readTree(body).get("status").asInt()).isEqualTo(status);
    }

    @Test
    void aNumberThatDiffersInAnyDigitIsAnotherPayload() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> first = post("/quotes", "{\"sku\":\"SKU-7\",\"unitPrice\":12345678.015}",
                "Idempotency-Key", key);
        // the same double, another decimal: as a fresh request it makes another order
        HttpResponse<byte[]> other = post("/quotes", "{\"sku\":\"SKU-7\",\"unitPrice\":12345678.0149999999999}",
                "Idempotency-Key", key);

        assertThat(first.statusCode()).isEqualTo(200);
        assertProblem(other, 422, IdempotencyProblems.KEY_REUSED);
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void numbersCompareAsDecimalsWithTheirScaleAsTheEngineDoes() throws Exception {
        String key = newKey();
        post("/quotes", "{\"unitPrice\":19.90,\"quantity\":3}", "Idempotency-Key", key);

        // another notation of the same decimal (digits and scale) is the same payload
        HttpResponse<byte[]> same = post("/quotes", "{\"quantity\":3,\"unitPrice\":1.990E1}", "Idempotency-Key", key);
        assertThat(same.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        // another scale is another payload, as BigDecimal arguments are for @Idempotent
        assertProblem(post("/quotes", "{\"unitPrice\":19.9,\"quantity\":3}", "Idempotency-Key", key), 422,
                IdempotencyProblems.KEY_REUSED);
        assertProblem(post("/quotes", "{\"unitPrice\":19.90,\"quantity\":3.0}", "Idempotency-Key", key), 422,
                IdempotencyProblems.KEY_REUSED);
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aJsonBodyWithADuplicateMemberNameIs400AndRunsNothing() throws Exception {
        String key = newKey();
        HttpResponse<byte[]> top = post("/quotes", "{\"amount\":1,\"amount\":1000}", "Idempotency-Key", key);
        HttpResponse<byte[]> nested = post("/quotes", "{\"order\":{\"amount\":1,\"amount\":1000}}",
                "Idempotency-Key", newKey());

        assertProblem(top, 400, IdempotencyProblems.INVALID_BODY);
        assertProblem(nested, 400, IdempotencyProblems.INVALID_BODY);
        // not one JSON document: the door cannot say which request it is
        assertProblem(post("/quotes", "{\"amount\":1} {\"amount\":2}", "Idempotency-Key", newKey()), 400,
                IdempotencyProblems.INVALID_BODY);
        assertProblem(post("/quotes", "{\"amount\":", "Idempotency-Key", newKey()), 400,
                IdempotencyProblems.INVALID_BODY);
        assertThat(json(top).get("detail").asString()).doesNotContain("amount").doesNotContain("1000");
        assertThat(orders.executions).hasValue(0);
        // nothing was recorded: the key is free for the request the client meant
        assertThat(post("/quotes", "{\"amount\":1000}", "Idempotency-Key", key).statusCode()).isEqualTo(200);
    }

    @Test
    void aFormLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        int overLimit = IdempotentRequestHandlerAdapter.DEFAULT_MAX_BODY_SIZE + 900_000;

        assertProblem(postForm(newKey(), overLimit, false), 413, IdempotencyProblems.BODY_TOO_LARGE);
        assertProblem(postForm(newKey(), overLimit, true), 413, IdempotencyProblems.BODY_TOO_LARGE);
        assertThat(orders.executions).hasValue(0);
        // a form under the limit, sent with a length or chunked, is fingerprinted by its parameters
        String key = newKey();
        assertThat(postForm(key, 1000, false).statusCode()).isEqualTo(200);
        assertThat(postForm(key, 1000, true).headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertProblem(postForm(key, 1001, true), 422, IdempotencyProblems.KEY_REUSED);
        assertThat(orders.executions).hasValue(1);
    }

    @Test
    void aMultipartBodyLargerThanTheLimitIs413AndRunsNothing() throws Exception {
        // under Spring's own multipart limits (1 MB a file), over the idempotent request's 1 MiB in all
        String boundary = "b" + UUID.randomUUID().toString().replace("-", "");
        String part = "x".repeat(700_000);
        String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n" + part + "\r\n--" + boundary + "\r\n"
                + "Content-Disposition: form-data; name=\"other\"; filename=\"b.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n" + part + "\r\n--" + boundary + "--\r\n";
        HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(URI.create(base + "/uploads"))
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .header("Idempotency-Key", newKey())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofByteArray());

        assertProblem(response, 413, IdempotencyProblems.BODY_TOO_LARGE);
        assertThat(orders.executions).hasValue(0);
    }

    @Test
    void aResponseLargerThanTheLimitIsNotRecordedAndItsTransactionRollsBack() throws Exception {
        String key = newKey();
        int size = IdempotentRequestHandlerAdapter.DEFAULT_MAX_RESPONSE_SIZE + 1;
        HttpResponse<byte[]> tooLarge = post("/exports?size=" + size, "{}", "Idempotency-Key", key);

        assertProblem(tooLarge, 500, IdempotencyProblems.RESPONSE_TOO_LARGE);
        assertThat(orders.count()).isZero();
        // the key was released, as for any result the engine cannot record: the retry runs (and fails) again
        assertProblem(post("/exports?size=" + size, "{}", "Idempotency-Key", key), 500,
                IdempotencyProblems.RESPONSE_TOO_LARGE);
        assertThat(orders.executions).hasValue(2);
        assertThat(orders.count()).isZero();
        // at the limit, recorded and replayed byte for byte
        String atLimit = newKey();
        int limit = IdempotentRequestHandlerAdapter.DEFAULT_MAX_RESPONSE_SIZE;
        HttpResponse<byte[]> first = post("/exports?size=" + limit, "{}", "Idempotency-Key", atLimit);
        HttpResponse<byte[]> replay = post("/exports?size=" + limit, "{}", "Idempotency-Key", atLimit);
        assertThat(first.body()).hasSize(limit);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.body()).isEqualTo(first.body());
        assertThat(orders.executions).hasValue(3);
    }

    @Test
    void everyBadKeyIsAProblemNeverTheContainersPage() throws Exception {
        // past the container's header limit (8 KB): the container refuses them before the application sees them
        assertRawProblem(raw(requestWithKey("k".repeat(10_000).getBytes(StandardCharsets.US_ASCII)), BODY), 400);
        assertRawProblem(raw(requestWithKey("k".repeat(100_000).getBytes(StandardCharsets.US_ASCII)), BODY), 400);
        // a control character HTTP forbids in a field value
        assertRawProblem(raw(requestWithKey(new byte[] {'k', 0x7f, 'k'}), BODY), 400);
        assertRawProblem(raw(requestWithKey(new byte[] {'"', 'k', 0x7f, '"'}), BODY), 400);
        assertRawProblem(raw(requestWithKey(new byte[] {'k', 0x01, 'k'}), BODY), 400);
        // a key within the container's limit is the door's own answer
        String own = raw(requestWithKey("k".repeat(4_000).getBytes(StandardCharsets.US_ASCII)), BODY);
        assertRawProblem(own, 400);
        assertThat(own).contains(IdempotencyProblems.INVALID_KEY.toString());
        assertThat(orders.executions).hasValue(0);
    }
}
