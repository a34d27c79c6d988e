package dev.idempotency.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.internal.Keys;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What waits for an operator, in core: the in-memory store counts and lists it, {@link Backlog} adds up, and every
 * decorator passes the questions to its store (the circuit breaker even while open: a report says nothing about
 * claims). The JDBC store's answers are checked by the TCK on every database.
 */
class BacklogTest {

    private static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");
    private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

    private ClaimRequest claim(String operation, String key, Instant at, Duration lease) {
        ClaimRequest r = new ClaimRequest(Keys.hash(operation, "", key), operation, key, Keys.hash("f", "", key),
                Tier.IRREVERSIBLE, at, at.plus(lease), at.plus(Duration.ofHours(1)), Duration.ofSeconds(1));
        assertThat(memory.claim(r).isAcquired()).isTrue();
        return r;
    }

    private ClaimRequest review(String operation, String key, Instant at) {
        ClaimRequest r = claim(operation, key, at, Duration.ofSeconds(30));
        assertThat(memory.markNeedsReview(r.keyHash(), r.leaseUntil())).isTrue();
        return r;
    }

    @Test
    void theInMemoryStoreCountsPerOperationAndListsInOrder() {
        ClaimRequest r2 = review("B.op", "r2", T0.plusSeconds(2));
        ClaimRequest r1 = review("B.op", "r1", T0.plusSeconds(1));
        ClaimRequest s2 = claim("A.op", "s2", T0, Duration.ofSeconds(20));
        ClaimRequest s1 = claim("A.op", "s1", T0, Duration.ofSeconds(10));
        claim("A.op", "live", T0, Duration.ofMinutes(5));
        ClaimRequest done = claim("C.op", "done", T0, Duration.ofSeconds(1));
        memory.complete(done.keyHash(), done.leaseUntil(), new byte[] {1}, T0.plusSeconds(2));
        Instant now = T0.plusSeconds(20);

        assertThat(memory.backlog(now)).containsExactly(
                new Backlog("A.op", 0, null, 2, s1.leaseUntil()),
                new Backlog("B.op", 2, r1.now(), 0, null));
        assertThat(memory.backlog(T0.plusSeconds(19))).containsExactly(
                new Backlog("A.op", 0, null, 1, s1.leaseUntil()),
                new Backlog("B.op", 2, r1.now(), 0, null));
        assertThat(memory.listNeedsReview(5)).extracting(IdempotencyRecord::key).containsExactly("r1", "r2");
        assertThat(memory.listNeedsReview(1)).extracting(IdempotencyRecord::key).containsExactly("r1");
        assertThat(memory.listStuck(now, 5)).containsExactly(s1.toInFlightRecord(), s2.toInFlightRecord());
        assertThat(memory.listStuck(now, 1)).containsExactly(s1.toInFlightRecord());
        assertThat(r2.key()).isEqualTo("r2");
        assertThatThrownBy(() -> memory.listNeedsReview(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limit must be positive, was 0");
        assertThatThrownBy(() -> memory.listStuck(now, -2)).hasMessageContaining("was -2");
    }

    @Test
    void backlogsAddUpKeepingTheEarliestInstants() {
        Backlog a = new Backlog("op", 1, T0.plusSeconds(5), 2, T0.plusSeconds(9));
        Backlog b = new Backlog("op", 3, T0.plusSeconds(4), 0, null);
        Backlog c = new Backlog("op", 0, null, 1, T0.plusSeconds(8));

        assertThat(a.plus(b)).isEqualTo(new Backlog("op", 4, T0.plusSeconds(4), 2, T0.plusSeconds(9)));
        assertThat(b.plus(a)).isEqualTo(new Backlog("op", 4, T0.plusSeconds(4), 2, T0.plusSeconds(9)));
        assertThat(a.plus(c)).isEqualTo(new Backlog("op", 1, T0.plusSeconds(5), 3, T0.plusSeconds(8)));
        assertThat(c.plus(a)).isEqualTo(new Backlog("op", 1, T0.plusSeconds(5), 3, T0.plusSeconds(8)));
        assertThat(Backlog.empty("op").plus(Backlog.empty("op"))).isEqualTo(Backlog.empty("op"));
        assertThat(Backlog.empty("op")).isEqualTo(new Backlog("op", 0, null, 0, null));
        assertThatThrownBy(() -> new Backlog("op", -1, null, 0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backlog("op", 0, null, -1, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theDecoratorsPassTheQuestionsToTheirStoreTheBreakerEvenWhileOpen() {
        review("B.op", "r1", T0);
        ClaimRequest stuck = claim("A.op", "s1", T0, Duration.ofSeconds(10));
        Instant now = T0.plusSeconds(60);
        boolean[] down = {false};
        ForwardingStore failing = new ForwardingStore(memory) {
            @Override
            public ClaimResult claim(ClaimRequest request) {
                if (down[0]) {
                    throw new IllegalStateException("connection refused");
                }
                return super.claim(request);
            }
        };
        CircuitBreakerStore breaker = CircuitBreakerStore.wrap(failing).failureThreshold(1).build();
        down[0] = true;
        ClaimRequest x = new ClaimRequest(Keys.hash("X.op", "", "x"), "X.op", "x", Keys.hash("f", "", "x"),
                Tier.REVERSIBLE, T0, T0.plusSeconds(1), T0.plusSeconds(60), Duration.ofSeconds(1));
        assertThatThrownBy(() -> breaker.claim(x)).isInstanceOf(CircuitOpenException.class);
        assertThat(breaker.state()).isEqualTo(CircuitBreakerStore.State.OPEN);

        List<Backlog> expected = memory.backlog(now);
        assertThat(expected).hasSize(2);
        for (IdempotencyStore front : List.of(breaker, CaffeinePrefilter.wrap(memory).build())) {
            assertThat(front.backlog(now)).isEqualTo(expected);
            assertThat(front.listNeedsReview(5)).isEqualTo(memory.listNeedsReview(5)).hasSize(1);
            assertThat(front.listStuck(now, 5)).containsExactly(stuck.toInFlightRecord());
        }
    }

    @Test
    void aStoreOfYoursThatLeavesTheDefaultsSaysItCannotCount() {
        IdempotencyStore bare = new ForwardingStore(memory) { };
        IdempotencyStore minimal = (IdempotencyStore) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                    if (method.isDefault()) {
                        return java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    throw new AssertionError("not called: " + method);
                });

        assertThat(bare.backlog(T0)).isEmpty();
        assertThatThrownBy(() -> minimal.backlog(T0)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("cannot count records by status");
        assertThatThrownBy(() -> minimal.listNeedsReview(1)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("cannot list records by status");
        assertThatThrownBy(() -> minimal.listStuck(T0, 1)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("cannot list records by status");
    }
}
