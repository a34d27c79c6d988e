package dev.idempotency.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The backlog gauges: one store query per refresh, none per scrape; ages that grow between refreshes. */
class MicrometerBacklogGaugesTest {

    private Instant now = Instant.parse("2026-01-01T10:00:00Z");
    private final Clock clock = new Clock() {
        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    };
    private final AtomicInteger queries = new AtomicInteger();
    private volatile boolean down;
    private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
    private final ForwardingStore store = new ForwardingStore(memory) {
        @Override
        public List<Backlog> backlog(Instant at) {
            queries.incrementAndGet();
            if (down) {
                throw new IllegalStateException("connection refused");
            }
            return super.backlog(at);
        }
    };
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerBacklogGauges gauges = new MicrometerBacklogGauges(store, registry, clock);

    private ClaimRequest claim(String operation, String key, Duration lease) {
        ClaimRequest r = new ClaimRequest(Keys.hash(operation, "", key), operation, key, Keys.hash("f", "", key),
                Tier.IRREVERSIBLE, now, now.plus(lease), now.plus(Duration.ofHours(1)), Duration.ofSeconds(1));
        memory.claim(r);
        return r;
    }

    private double gauge(String name, String operation) {
        return registry.get(name).tag("operation", operation).gauge().value();
    }

    private double seconds(String name, String operation) {
        return registry.get(name).tag("operation", operation).timeGauge().value(TimeUnit.SECONDS);
    }

    @Test
    void theGaugesShowTheLastRefreshAndScrapesNeverQueryTheStore() {
        ClaimRequest review = claim("Payments.pay", "P-1", Duration.ofSeconds(30));
        memory.markNeedsReview(review.keyHash(), review.leaseUntil());
        claim("Orders.create", "O-1", Duration.ofSeconds(10));
        now = now.plusSeconds(60);

        gauges.refresh();
        assertThat(gauge(MicrometerBacklogGauges.NEEDS_REVIEW, "Payments.pay")).isEqualTo(1);
        assertThat(seconds(MicrometerBacklogGauges.NEEDS_REVIEW_OLDEST, "Payments.pay")).isEqualTo(60);
        assertThat(gauge(MicrometerBacklogGauges.STUCK, "Orders.create")).isEqualTo(1);
        assertThat(seconds(MicrometerBacklogGauges.STUCK_OLDEST, "Orders.create")).isEqualTo(50);
        assertThat(gauge(MicrometerBacklogGauges.STUCK, "Payments.pay")).isZero();

        now = now.plusSeconds(30); // ages grow between refreshes; counts wait for the next one
        for (int scrape = 0; scrape < 5; scrape++) {
            registry.getMeters().forEach(m -> m.measure().forEach(x -> { }));
        }
        assertThat(seconds(MicrometerBacklogGauges.NEEDS_REVIEW_OLDEST, "Payments.pay")).isEqualTo(90);
        assertThat(queries).hasValue(1);

        memory.resolve(memory.find(review.keyHash()).orElseThrow(), null, now);
        gauges.run();
        assertThat(gauge(MicrometerBacklogGauges.NEEDS_REVIEW, "Payments.pay")).isZero();
        assertThat(seconds(MicrometerBacklogGauges.NEEDS_REVIEW_OLDEST, "Payments.pay")).isZero();
        assertThat(queries).hasValue(2);
    }

    @Test
    void aFailedRefreshIsCountedAndTheGaugesKeepTheirLastValues() {
        claim("Orders.create", "O-1", Duration.ofSeconds(10));
        now = now.plusSeconds(60);
        gauges.refresh();

        down = true;
        assertThat(gauges.refresh()).isNull();

        assertThat(registry.get(MicrometerBacklogGauges.REFRESH_FAILURES).counter().count()).isEqualTo(1);
        assertThat(gauge(MicrometerBacklogGauges.STUCK, "Orders.create")).isEqualTo(1);
    }
}
