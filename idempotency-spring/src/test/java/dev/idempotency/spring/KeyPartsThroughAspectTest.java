package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.ForwardingIdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * {@code #parts(...)} through the proxy: the parts of a key cannot run into each other as a hand-written join's do,
 * and a hand-written join keeps the very key (and so the very stored hash) it always had.
 */
@SpringJUnitConfig(KeyPartsThroughAspectTest.Config.class)
class KeyPartsThroughAspectTest {

    @Autowired Shipments shipments;
    @Autowired Claims claims;

    @BeforeEach
    void reset() {
        Shipments.runs.set(0);
        claims.requests.clear();
    }

    @Test
    void partsThatAJoinWouldRunTogetherAreTwoKeysAndTwoExecutions() {
        shipments.parts("x:y", "z");
        shipments.parts("x", "y:z");
        shipments.parts("x:y", "z");
        assertThat(Shipments.runs).as("(x:y, z) and (x, y:z) ran once each; the repeat replayed").hasValue(2);
        assertThat(claims.requests).extracting(ClaimRequest::key)
                .containsExactly("A:x\\:y:z", "A:x:y\\:z", "A:x\\:y:z");
    }

    @Test
    void aHandWrittenJoinStillGivesOneKeyForBothAndTheHashItAlwaysHad() {
        shipments.joined("x:y", "z");
        // the ambiguity #parts removes: another intent under the first one's key, refused as a reused key
        assertThatThrownBy(() -> shipments.joined("x", "y:z"))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("'A:x:y:z'");
        assertThat(Shipments.runs).hasValue(1);
        assertThat(claims.requests).extracting(ClaimRequest::key).containsExactly("A:x:y:z", "A:x:y:z");
        // SHA-256(len + "Shipments.joined", len + "", len + "A:x:y:z"), as stored before #parts existed
        assertThat(HexFormat.of().formatHex(claims.requests.get(0).keyHash()))
                .isEqualTo("b44def1e91b91f27b0cd1dafd3d58a2c9e0bc3755f351f71768cba22c563c2c7");
    }

    @Test
    void partsWithoutASeparatorInThemAreTheKeyTheJoinGave() {
        shipments.joined("A-1", "3");
        shipments.parts("A-1", "3");
        assertThat(claims.requests).extracting(ClaimRequest::key).containsExactly("A:A-1:3", "A:A-1:3");
    }

    @Test
    void anEmptyPartIsRefusedBeforeTheMethodRuns() {
        assertThatThrownBy(() -> shipments.parts("x", ""))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("Shipments.parts")
                .hasMessageContaining("key part 3 is empty");
        assertThat(Shipments.runs).hasValue(0);
    }

    static class Shipments {
        static final AtomicInteger runs = new AtomicInteger();

        @Idempotent(key = "'A:' + #a + ':' + #b", tier = Tier.REVERSIBLE)
        @SuppressWarnings("idempotency:key-concatenation")
        public String joined(String a, String b) {
            return "ran " + runs.incrementAndGet();
        }

        @Idempotent(key = "#parts('A', #a, #b)", tier = Tier.REVERSIBLE)
        public String parts(String a, String b) {
            return "ran " + runs.incrementAndGet();
        }
    }

    /** The store, remembering every claim it was asked for. */
    static final class Claims extends ForwardingIdempotencyStore {
        final List<ClaimRequest> requests = new CopyOnWriteArrayList<>();

        Claims() {
            super(new InMemoryIdempotencyStore());
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
            requests.add(request);
            return super.claim(request);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Shipments.class)
    static class Config {
        @Bean
        Claims idempotencyStore() {
            return new Claims();
        }
    }
}
