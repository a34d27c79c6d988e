package dev.idempotency.sample.order;

import dev.idempotency.web.IdempotencyKeyInterceptor;
import dev.idempotency.web.IdempotencyKeys;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpRequest;
import org.springframework.http.MediaType;
import org.springframework.http.client.BufferingClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

/**
 * The caller: three layers that each retry on their own, with Spring Framework 7's retry support, exponential backoff
 * and jitter, over a {@code RestClient} that gives up after {@link Timings#clientTimeout()}:
 *
 * <pre>
 * agent tool call      2 attempts   RetryTemplate                        mints the key: IdempotencyKeys.call
 *   API gateway        3 attempts   {@code @Retryable} (@EnableResilientMethods)
 *     HTTP client      2 attempts   a retrying interceptor (RetryTemplate), below IdempotencyKeyInterceptor
 *       order service               POST /orders, Idempotency-Key: "the one key"
 * </pre>
 *
 * The key is made once, by the outermost layer, outside every retry loop; {@link IdempotencyKeyInterceptor} puts it
 * on every request, so that all 2 x 3 x 2 = 12 possible attempts carry it.
 */
final class Caller implements AutoCloseable {

    static final int TOOL_ATTEMPTS = 2;
    static final int GATEWAY_ATTEMPTS = 3;
    static final int HTTP_ATTEMPTS = 2;

    private final AnnotationConfigApplicationContext context;
    private final RetryTemplate toolLayer;
    private final Trace trace;

    /**
     * @param onTimeout run when a request times out
     */
    Caller(String baseUrl, Timings timings, StoryLog log, Runnable onTimeout) {
        this.trace = new Trace(log, timings, onTimeout);
        context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("sample", Map.of(
                "sample.gateway.retries", GATEWAY_ATTEMPTS - 1,
                "sample.gateway.delay", timings.gatewayBackoff().toMillis(),
                "sample.gateway.jitter", timings.gatewayBackoff().toMillis() / 2)));
        context.registerBean(Trace.class, () -> trace);
        context.registerBean(Timings.class, () -> timings);
        context.registerBean("baseUrl", String.class, () -> baseUrl);
        context.register(Layers.class);
        context.refresh();
        toolLayer = new RetryTemplate(backoff(TOOL_ATTEMPTS, timings.toolBackoff())
                .includes(ResourceAccessException.class, HttpServerErrorException.class,
                        HttpClientErrorException.Conflict.class)
                .build());
    }

    /**
     * The agent's tool call: mints the key, then retries the gateway.
     *
     * @throws org.springframework.web.client.RestClientException what the last attempt of the last layer met
     */
    OrderReceipt placeOrder(OrderRequest request) {
        Gateway gateway = context.getBean(Gateway.class);
        return IdempotencyKeys.call(() -> {
            trace.minted(IdempotencyKeys.current().orElseThrow());
            return toolLayer.invoke(() -> {
                trace.enter(Trace.TOOL);
                return gateway.place(request);
            });
        });
    }

    /** Requests sent, and how many of them the client got an answer to in time. */
    int requests() {
        return trace.requests;
    }

    int answered() {
        return trace.answered;
    }

    @Override
    public void close() {
        context.close();
    }

    private static RetryPolicy.Builder backoff(int attempts, Duration delay) {
        return RetryPolicy.builder().maxRetries(attempts - 1).delay(delay).multiplier(2).jitter(delay.dividedBy(2));
    }

    /** The API gateway: retries a timeout, a 5xx, and a 409 (the first request with the key still running). */
    static class Gateway {

        private final RestClient orders;
        private final Trace trace;

        Gateway(RestClient orders, Trace trace) {
            this.orders = orders;
            this.trace = trace;
        }

        @Retryable(includes = {ResourceAccessException.class, HttpServerErrorException.class,
                HttpClientErrorException.Conflict.class}, maxRetriesString = "${sample.gateway.retries}",
                delayString = "${sample.gateway.delay}", jitterString = "${sample.gateway.jitter}", multiplier = 2)
        public OrderReceipt place(OrderRequest request) {
            trace.enter(Trace.GATEWAY);
            return orders.post().uri("/orders").contentType(MediaType.APPLICATION_JSON).body(request)
                    .retrieve().body(OrderReceipt.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class Layers {

        @Bean
        RestClient orders(String baseUrl, Timings timings, Trace trace) {
            JdkClientHttpRequestFactory http = new JdkClientHttpRequestFactory(
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
            http.setReadTimeout(timings.clientTimeout());
            RetryTemplate httpLayer = new RetryTemplate(backoff(HTTP_ATTEMPTS, timings.httpBackoff())
                    .includes(IOException.class).build());
            // buffered: Trace reads the body inside the HTTP layer's retry, so that a timeout that cuts the body off
            // (the read timeout counts until the body's end) is retried as a timeout, not taken for a bad answer
            return RestClient.builder().baseUrl(baseUrl).requestFactory(new BufferingClientHttpRequestFactory(http))
                    // first: the key is set once, and every re-execution below keeps it
                    .requestInterceptor(IdempotencyKeyInterceptor.create())
                    .requestInterceptor(retrying(httpLayer))
                    .requestInterceptor(trace)
                    .build();
        }

        @Bean
        Gateway gateway(RestClient orders, Trace trace) {
            return new Gateway(orders, trace);
        }
    }

    /**
     * The HTTP client's own retry: executes the request again after an I/O failure (a read timeout) or a 409 (the
     * first request with the key still running); the last attempt's 409 is the caller's answer.
     */
    static ClientHttpRequestInterceptor retrying(RetryTemplate retry) {
        return (request, body, execution) -> {
            int[] attempt = {0};
            try {
                return retry.execute(() -> {
                    ClientHttpResponse response = execution.execute(request, body);
                    if (response.getStatusCode().value() == 409 && ++attempt[0] < HTTP_ATTEMPTS) {
                        response.close();
                        throw new IOException("409: the first request with this key still runs");
                    }
                    return response;
                });
            } catch (RetryException e) {
                if (e.getCause() instanceof IOException io) {
                    throw io;
                }
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                throw new IllegalStateException(e.getCause());
            }
        };
    }

    /** Numbers each request, tells the path through the layers that sent it, and what came back. */
    static final class Trace implements ClientHttpRequestInterceptor {

        static final int TOOL = 0;
        static final int GATEWAY = 1;
        static final int HTTP = 2;
        private static final String[] NAMES = {"tool", "gateway", "http"};
        private static final int[] MAX = {TOOL_ATTEMPTS, GATEWAY_ATTEMPTS, HTTP_ATTEMPTS};

        private final StoryLog log;
        private final Timings timings;
        private final Runnable onTimeout;
        private final int[] attempt = new int[3];
        int requests;
        int answered;

        Trace(StoryLog log, Timings timings, Runnable onTimeout) {
            this.log = log;
            this.timings = timings;
            this.onTimeout = onTimeout;
        }

        void minted(String key) {
            log.line("the tool layer mints the key \"" + key + "\", once, outside every retry loop");
        }

        /** An attempt of {@code layer} begins: the layers inside it start counting again. */
        void enter(int layer) {
            attempt[layer]++;
            for (int inner = layer + 1; inner < attempt.length; inner++) {
                attempt[inner] = 0;
            }
        }

        private String path() {
            StringBuilder path = new StringBuilder();
            for (int layer = 0; layer < attempt.length; layer++) {
                path.append(layer == 0 ? "" : " > ").append(NAMES[layer]).append(' ').append(attempt[layer])
                        .append('/').append(MAX[layer]);
            }
            return path.toString();
        }

        @Override
        public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
                throws IOException {
            enter(HTTP);
            int number = ++requests;
            request.getHeaders().set(Arrivals.REQUEST_NUMBER, Integer.toString(number));
            String line = "request " + number + " [" + path() + "] Idempotency-Key: "
                    + request.getHeaders().getFirst("Idempotency-Key");
            log.line(line);
            try {
                ClientHttpResponse response = execution.execute(request, body);
                // read (and buffer) the whole body now, inside the HTTP layer's retry: the read timeout counts until
                // the body's end, so a body it cuts off fails this attempt as a timeout, not the answer's extraction
                response.getBody();
                answered++;
                String orderId = Arrivals.orderId(response.getHeaders().getFirst("Location"));
                log.line("request " + number + " answered " + response.getStatusCode().value()
                        + (orderId == null ? "" : " " + orderId)
                        + ("true".equals(response.getHeaders().getFirst(
                                IdempotentRequestHandlerAdapter.DEFAULT_REPLAYED_HEADER))
                                        ? " (Idempotent-Replayed: true)" : ""));
                return response;
            } catch (HttpTimeoutException e) {
                log.line("request " + number + " timed out after " + timings.clientTimeout().toMillis()
                        + " ms: the client gives up; the order service does not know it and goes on");
                onTimeout.run();
                throw e;
            } catch (IOException e) {
                log.line("request " + number + " failed: " + e);
                throw e;
            }
        }
    }
}
