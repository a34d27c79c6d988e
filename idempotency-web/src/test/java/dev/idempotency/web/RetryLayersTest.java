package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

/**
 * The caller's end, over real HTTP: three retry layers (a tool layer's {@link RetryTemplate}, a gateway's
 * {@link Retryable}, an HTTP client's retrying interceptor), each retrying on its own, with the key minted once
 * outside them all. Every request the server receives carries that one key, and the order is placed once.
 */
class RetryLayersTest {

    static OrderServer server;
    static final AtomicInteger lostResponses = new AtomicInteger();
    static final AtomicInteger sent = new AtomicInteger();
    AnnotationConfigApplicationContext client;

    record OrderReceipt(String id, String item, int quantity) {
    }

    /** The gateway: retry outside the transaction outside the client's own @Idempotent. */
    static class Gateway {
        final RestClient orders;
        final DataSource dataSource;
        final List<Object> transactions = new CopyOnWriteArrayList<>();

        Gateway(RestClient orders, DataSource dataSource) {
            this.orders = orders;
            this.dataSource = dataSource;
        }

        /** A method, not the field: the caller holds the CGLIB proxy, whose own fields are never set. */
        public List<Object> transactions() {
            return transactions;
        }

        @Retryable(includes = ResourceAccessException.class, maxRetries = 1, delay = 0)
        @Transactional
        @Idempotent(key = "#key", tier = Tier.REVERSIBLE)
        public OrderReceipt place(String key, OrderApp.OrderRequest order) {
            transactions.add(TransactionSynchronizationManager.getResource(dataSource));
            return orders.post().uri("/orders").contentType(MediaType.APPLICATION_JSON).body(order)
                    .retrieve().body(OrderReceipt.class);
        }
    }

    /** A gateway whose client times out, and which retries a timeout and a 409 (the first request still running). */
    static class PatientGateway {
        final RestClient orders;

        PatientGateway(RestClient orders) {
            this.orders = orders;
        }

        @Retryable(includes = {ResourceAccessException.class, HttpClientErrorException.Conflict.class}, maxRetries = 20,
                delay = 20, jitter = 5)
        public OrderReceipt place(OrderApp.OrderRequest order) {
            return orders.post().uri("/orders").contentType(MediaType.APPLICATION_JSON).body(order)
                    .retrieve().body(OrderReceipt.class);
        }
    }

    @Configuration
    @EnableTransactionManagement
    @EnableIdempotency
    @EnableResilientMethods
    static class ClientConfig {
        @Bean
        DataSource dataSource() {
            return new DriverManagerDataSource("jdbc:h2:mem:client-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        IdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Bean
        RestClient orders() {
            return RestClient.builder().baseUrl(server.base)
                    .requestFactory(losingResponses(new JdkClientHttpRequestFactory()))
                    .requestInterceptor(IdempotencyKeyInterceptor.create())
                    .requestInterceptor(retryingTwice())
                    .build();
        }

        @Bean
        Gateway gateway(RestClient orders, DataSource dataSource) {
            return new Gateway(orders, dataSource);
        }

        @Bean
        PatientGateway patientGateway() {
            JdkClientHttpRequestFactory timingOut = new JdkClientHttpRequestFactory();
            timingOut.setReadTimeout(Duration.ofMillis(300));
            return new PatientGateway(RestClient.builder().baseUrl(server.base)
                    .requestFactory(timingOut)
                    .requestInterceptor(IdempotencyKeyInterceptor.create())
                    .requestInterceptor((request, body, execution) -> {
                        try {
                            return execution.execute(request, body);
                        } catch (IOException timedOut) {
                            // the server's work outlived the client's timeout: let it finish now
                            server.probe.release.countDown();
                            throw timedOut;
                        }
                    })
                    .build());
        }
    }

    /** The HTTP client's own retry: each request is executed up to twice, below the key interceptor. */
    static ClientHttpRequestInterceptor retryingTwice() {
        return (request, body, execution) -> {
            try {
                return execution.execute(request, body);
            } catch (IOException lost) {
                return execution.execute(request, body);
            }
        };
    }

    /** The network: the server gets the request and acts on it, and the first N responses are lost on the way back. */
    static ClientHttpRequestFactory losingResponses(ClientHttpRequestFactory real) {
        return (URI uri, HttpMethod method) -> {
            ClientHttpRequest request = real.createRequest(uri, method);
            return new ClientHttpRequest() {
                @Override
                public ClientHttpResponse execute() throws IOException {
                    sent.incrementAndGet();
                    ClientHttpResponse response = request.execute();
                    if (lostResponses.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        response.close();
                        throw new IOException("response lost (injected)");
                    }
                    return response;
                }

                @Override
                public java.io.OutputStream getBody() throws IOException {
                    return request.getBody();
                }

                @Override
                public HttpMethod getMethod() {
                    return request.getMethod();
                }

                @Override
                public URI getURI() {
                    return request.getURI();
                }

                @Override
                public org.springframework.http.HttpHeaders getHeaders() {
                    return request.getHeaders();
                }

                @Override
                public Map<String, Object> getAttributes() {
                    return request.getAttributes();
                }
            };
        };
    }

    @BeforeAll
    static void startServer() {
        // non-default properties, checked here too: the forwarding filter, another replayed-header name
        server = OrderServer.onH2("idempotency.web.propagate-inbound-key=true",
                "idempotency.web.replayed-header=X-Idempotent-Replay");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void startClient() {
        server.probe.executions.set(0);
        server.probe.keysArrived.clear();
        server.probe.entered = new java.util.concurrent.CountDownLatch(1);
        server.probe.release = new java.util.concurrent.CountDownLatch(0);
        server.probe.jdbc.update("delete from " + server.probe.table);
        lostResponses.set(0);
        sent.set(0);
        client = new AnnotationConfigApplicationContext(ClientConfig.class);
    }

    @AfterEach
    void stopClient() {
        client.close();
    }

    @Test
    void threeRetryLayersSendOneKeyAndTheOrderIsPlacedOnce() {
        Gateway gateway = client.getBean(Gateway.class);
        RetryTemplate toolLayer = new RetryTemplate(RetryPolicy.builder().maxRetries(1).delay(Duration.ZERO).build());
        OrderApp.OrderRequest order = new OrderApp.OrderRequest("book", 1);
        // 2 tool attempts x 2 gateway attempts x 2 HTTP executions = 8 requests; all but the last lose their response
        lostResponses.set(7);

        String key = IdempotencyKeys.newKey();
        OrderReceipt receipt = IdempotencyKeys.call(key,
                () -> toolLayer.invoke(() -> IdempotencyKeys.call(() -> gateway.place(IdempotencyKeys.current().orElseThrow(), order))));

        assertThat(sent).hasValue(8);
        assertThat(server.probe.keysArrived).hasSize(8).containsOnly('"' + key + '"');
        assertThat(server.probe.executions).hasValue(1);
        assertThat(server.probe.count()).isEqualTo(1);
        assertThat(receipt.item()).isEqualTo("book");
        // @Retryable wraps @Transactional: each gateway attempt ran in a transaction of its own
        assertThat(gateway.transactions()).hasSize(4).doesNotContainNull();
        Set<Object> distinct = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        distinct.addAll(gateway.transactions());
        assertThat(distinct).hasSize(4);
    }

    @Test
    void aKeyMintedInsideTheRetryIsANewRequestPerAttempt() {
        Gateway gateway = client.getBean(Gateway.class);
        RetryTemplate retry = new RetryTemplate(RetryPolicy.builder().maxRetries(1).delay(Duration.ZERO).build());
        OrderApp.OrderRequest order = new OrderApp.OrderRequest("pen", 1);
        lostResponses.set(4);

        // the bug the seed describes: the key made inside the retried work
        retry.invoke(() -> IdempotencyKeys.call(IdempotencyKeys.newKey(),
                () -> gateway.place(IdempotencyKeys.current().orElseThrow(), order)));

        // the gateway's own retry (inside the key) then the outer one (a new key): 4 requests lost, the 5th answered
        assertThat(server.probe.keysArrived).hasSize(5);
        assertThat(new ArrayList<>(Set.copyOf(server.probe.keysArrived))).hasSize(2);
        assertThat(server.probe.executions).hasValue(2);
    }

    @Test
    void aPostWithNoKeyBoundIsRefusedBeforeItIsSent() {
        Gateway gateway = client.getBean(Gateway.class);

        assertThatIllegalStateException()
                .isThrownBy(() -> client.getBean(RestClient.class).post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
                        .body(new OrderApp.OrderRequest("book", 1)).retrieve().toBodilessEntity())
                .withMessageContaining("POST " + server.base + "/orders has no idempotency key")
                .withMessageContaining("IdempotencyKeys.call");
        assertThat(sent).hasValue(0);
    }

    @Test
    void anInnerLayerJoinsTheOuterKey() {
        String outer = IdempotencyKeys.call("outer-key", () -> IdempotencyKeys.call(() -> IdempotencyKeys.current().orElseThrow()));

        assertThat(outer).isEqualTo("outer-key");
        assertThat(IdempotencyKeys.current()).isEmpty();
    }

    @Test
    void aGatewayForwardsItsCallersKeyWhenAskedTo() {
        RestClient plain = RestClient.builder().baseUrl(server.base).build();

        plain.post().uri("/gateway").header("Idempotency-Key", "forwarded-1").contentType(MediaType.APPLICATION_JSON)
                .body(new OrderApp.OrderRequest("book", 1)).retrieve().toBodilessEntity();
        plain.post().uri("/gateway").header("Idempotency-Key", "forwarded-1").contentType(MediaType.APPLICATION_JSON)
                .body(new OrderApp.OrderRequest("book", 1)).retrieve().toBodilessEntity();

        // the gateway's two inbound requests and the two it forwarded, all with the caller's key
        assertThat(server.probe.keysArrived).containsExactly("forwarded-1", "\"forwarded-1\"", "forwarded-1",
                "\"forwarded-1\"");
        assertThat(server.probe.executions).hasValue(1);
    }

    @Test
    void aKeyTheRequestAlreadyCarriesIsKeptAndSafeMethodsGetNone() {
        RestClient orders = client.getBean(RestClient.class);

        IdempotencyKeys.call("bound-key", () -> orders.post().uri("/orders").header("Idempotency-Key", "\"own-key\"")
                .contentType(MediaType.APPLICATION_JSON).body(new OrderApp.OrderRequest("book", 1)).retrieve()
                .toBodilessEntity());
        IdempotencyKeys.call("bound-key", () -> orders.get().uri("/orders").retrieve().onStatus(s -> true, (q, r) -> { })
                .toBodilessEntity());

        assertThat(server.probe.keysArrived).containsExactly("\"own-key\"");
    }

    @Test
    void aClientThatTimesOutAndRetriesGetsTheOneOrderItsFirstAttemptPlaced() {
        PatientGateway gateway = client.getBean(PatientGateway.class);
        // the order takes longer than the client waits: held until the client has timed out once
        server.probe.release = new java.util.concurrent.CountDownLatch(1);

        OrderReceipt receipt = IdempotencyKeys.call(() -> gateway.place(new OrderApp.OrderRequest("lamp", 1)));

        assertThat(receipt.item()).isEqualTo("lamp");
        assertThat(server.probe.keysArrived).hasSizeGreaterThanOrEqualTo(2);
        assertThat(Set.copyOf(server.probe.keysArrived)).hasSize(1);
        assertThat(server.probe.executions).hasValue(1);
        assertThat(server.probe.count()).isEqualTo(1);
    }

    @Test
    void theReplayedHeaderIsNamedByTheProperty() {
        RestClient plain = RestClient.builder().baseUrl(server.base).build();
        java.util.function.Supplier<org.springframework.http.ResponseEntity<Void>> send = () -> plain.post().uri("/orders")
                .header("Idempotency-Key", "named-header-1").contentType(MediaType.APPLICATION_JSON)
                .body(new OrderApp.OrderRequest("cup", 1)).retrieve().toBodilessEntity();

        send.get();
        org.springframework.http.HttpHeaders replay = send.get().getHeaders();

        assertThat(replay.getFirst("X-Idempotent-Replay")).isEqualTo("true");
        assertThat(replay.containsHeader("Idempotent-Replayed")).isFalse();
    }
}
