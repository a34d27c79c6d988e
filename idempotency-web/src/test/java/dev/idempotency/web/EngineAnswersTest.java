package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.json.JsonMapper;

/** The engine's other answers over real HTTP: 428 (confirmation gate), 500 outcome-unknown, 503 (store down). */
class EngineAnswersTest {

    static final AtomicBoolean storeDown = new AtomicBoolean();
    static final AtomicInteger transfers = new AtomicInteger();
    static ConfigurableApplicationContext context;
    static String base;
    final HttpClient http = HttpClient.newHttpClient();

    /** A store that can be made to fail, over the in-memory one. */
    static final class SwitchableStore extends ForwardingStore {
        SwitchableStore() {
            super(new InMemoryIdempotencyStore());
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            if (storeDown.get()) {
                throw new IdempotencyStoreException("store down (injected)", false, new IllegalStateException());
            }
            return super.claim(request);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        IdempotencyStore store() {
            return new SwitchableStore();
        }

        /** Payments need a confirmation; transfers do not. */
        @Bean
        ConfirmationGate gate() {
            return call -> {
                if (call.operation().equals("payments")) {
                    throw new ConfirmationRequiredException(call.operation(), call.key(), "confirm the payment first");
                }
            };
        }

        @RestController
        static class Money {
            @PostMapping("/payments")
            @IdempotentRequest(tier = Tier.IRREVERSIBLE, operation = "payments")
            public Map<String, Object> pay() {
                return Map.of("paid", true);
            }

            @PostMapping("/transfers")
            @IdempotentRequest(tier = Tier.IRREVERSIBLE)
            public Map<String, Object> transfer() {
                transfers.incrementAndGet();
                throw new IllegalStateException("the bank's reply was lost");
            }

            /** An irreversible effect, then a response larger than what is recorded. */
            @PostMapping("/statements")
            @IdempotentRequest(tier = Tier.IRREVERSIBLE)
            public byte[] statement() {
                transfers.incrementAndGet();
                return new byte[IdempotentRequestHandlerAdapter.DEFAULT_MAX_RESPONSE_SIZE + 1];
            }

            @PostMapping("/refunds")
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public Map<String, Object> refund() {
                return Map.of("refunded", true);
            }
        }
    }

    @BeforeAll
    static void start() {
        context = new SpringApplicationBuilder(App.class).properties("server.port=0", "idempotency.purge.enabled=false",
                "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID()).run();
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    HttpResponse<byte[]> post(String path, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Idempotency-Key", key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    static void assertProblem(HttpResponse<byte[]> response, int status, URI type) {
        assertThat(response.statusCode()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(JsonMapper.builder().build().readTree(response.body()).get("type").asString())
                .isEqualTo(type.toString());
    }

    @Test
    void anUnconfirmedIrreversibleRequestIs428() throws Exception {
        assertProblem(post("/payments", UUID.randomUUID().toString()), 428, IdempotencyProblems.CONFIRMATION_REQUIRED);
    }

    @Test
    void anIrreversibleRequestWhoseOutcomeIsUnknownIs500OutcomeUnknownOnEveryRetry() throws Exception {
        String key = UUID.randomUUID().toString();
        transfers.set(0);
        HttpResponse<byte[]> failed = post("/transfers", key);
        HttpResponse<byte[]> retry = post("/transfers", key);

        assertThat(failed.statusCode()).isEqualTo(500);
        assertProblem(retry, 500, IdempotencyProblems.OUTCOME_UNKNOWN);
        assertThat(transfers).hasValue(1);
    }

    @Test
    void anIrreversibleResponseTooLargeToRecordIsHeldForReviewNotRunAgain() throws Exception {
        String key = UUID.randomUUID().toString();
        transfers.set(0);
        HttpResponse<byte[]> tooLarge = post("/statements", key);
        HttpResponse<byte[]> retry = post("/statements", key);

        assertProblem(tooLarge, 500, IdempotencyProblems.RESPONSE_TOO_LARGE);
        // the effect happened and its response could not be recorded: the key waits for an operator
        assertProblem(retry, 500, IdempotencyProblems.OUTCOME_UNKNOWN);
        assertThat(transfers).hasValue(1);
    }

    @Test
    void aStoreThatFailsIs503AndTheRetryRuns() throws Exception {
        String key = UUID.randomUUID().toString();
        storeDown.set(true);
        HttpResponse<byte[]> down;
        try {
            down = post("/refunds", key);
        } finally {
            storeDown.set(false);
        }
        HttpResponse<byte[]> retry = post("/refunds", key);

        assertProblem(down, 503, IdempotencyProblems.STORE_UNAVAILABLE);
        assertThat(retry.statusCode()).isEqualTo(200);
    }
}
