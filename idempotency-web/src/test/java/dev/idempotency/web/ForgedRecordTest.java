package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Tier;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.json.JsonMapper;

/**
 * A record that someone rewrote in the store (a database row edited, a shared pre-filter written by a stranger):
 * the replay sends only what the {@code replayed-headers} allow-list names and a valid status, whatever the record
 * holds. The first request's record is swapped, as the store writes it, for a forged one.
 */
class ForgedRecordTest {

    /** The record the store writes instead of the genuine one, when set. */
    static final AtomicReference<@Nullable RecordedResponse> forged = new AtomicReference<>();
    static final AtomicInteger executions = new AtomicInteger();
    static ConfigurableApplicationContext context;
    static String base;
    final HttpClient http = HttpClient.newHttpClient();

    /** Writes the forged record, encoded by the application's codec, in place of the genuine one. */
    static final class ForgingStore extends ForwardingStore {
        ForgingStore() {
            super(new InMemoryIdempotencyStore());
        }

        @Override
        public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
            RecordedResponse forgery = forged.get();
            byte[] written = forgery == null ? result
                    : context.getBean(ResultCodec.class).encode(forgery, RecordedResponse.class);
            return super.complete(keyHash, leaseUntil, written, expiresAt);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        IdempotencyStore store() {
            return new ForgingStore();
        }

        @RestController
        static class Orders {
            @PostMapping("/orders")
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public ResponseEntity<Map<String, Object>> create() {
                return ResponseEntity.status(201).location(URI.create("/orders/" + executions.incrementAndGet()))
                        .body(Map.of("created", true));
            }
        }
    }

    @BeforeAll
    static void start() {
        // no local pre-filter: it would answer the retry with the genuine outcome it saw committed on this node
        context = new SpringApplicationBuilder(App.class).properties("server.port=0", "idempotency.purge.enabled=false",
                "idempotency.prefilter.enabled=false", "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID()).run();
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @BeforeEach
    void reset() {
        forged.set(null);
        executions.set(0);
    }

    HttpResponse<byte[]> post(String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + "/orders")).header("Idempotency-Key", key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    static RecordedResponse forgery(int status, Map<String, List<String>> extraHeaders) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("Content-Type", List.of("application/json"));
        headers.put("Location", List.of("/orders/forged"));
        headers.putAll(extraHeaders);
        return new RecordedResponse(status, headers, "{\"forged\":true}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aReplaySendsOnlyTheAllowListedHeadersWhateverTheRecordHolds() throws Exception {
        forged.set(forgery(201, Map.of(
                "Set-Cookie", List.of("SESSION=attacker"),
                "Access-Control-Allow-Origin", List.of("*"),
                "set-cookie", List.of("OTHER=attacker"),
                "Refresh", List.of("0; url=https://attacker.example/"))));
        String key = UUID.randomUUID().toString();
        HttpResponse<byte[]> first = post(key);
        HttpResponse<byte[]> replay = post(key);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(replay.headers().allValues("Set-Cookie")).isEmpty();
        assertThat(replay.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
        assertThat(replay.headers().firstValue("Refresh")).isEmpty();
        // what the allow-list names is replayed as the record holds it
        assertThat(replay.headers().firstValue("Location")).hasValue("/orders/forged");
        assertThat(executions).hasValue(1);
    }

    @Test
    void aRecordWithAStatusNoResponseCanHaveIsRefusedAsUnreadable() throws Exception {
        for (int status : new int[] {0, 101, 99, 600, -1}) {
            forged.set(forgery(status, Map.of()));
            String key = UUID.randomUUID().toString();
            post(key);
            HttpResponse<byte[]> replay = post(key);

            assertThat(replay.statusCode()).as("status %s", status).isEqualTo(500);
            assertThat(replay.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(JsonMapper.builder().build().readTree(replay.body()).get("type").asString())
                    .isEqualTo(IdempotencyProblems.REPLAY_FAILED.toString());
            assertThat(replay.headers().firstValue("Location")).isEmpty();
        }
    }

    @Test
    void aRecordedHeaderValueWithAControlCharacterIsRefusedNotSent() throws Exception {
        forged.set(forgery(201, Map.of("ETag", List.of("\"a\"\r\nSet-Cookie: SESSION=attacker"))));
        String key = UUID.randomUUID().toString();
        post(key);
        HttpResponse<byte[]> replay = post(key);

        assertThat(replay.statusCode()).isEqualTo(500);
        assertThat(replay.headers().allValues("Set-Cookie")).isEmpty();
        assertThat(replay.headers().firstValue("ETag")).isEmpty();
    }
}
