package dev.idempotency.samples.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyContext;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.boot.IdempotencyProperties;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;

/** The sample as its users run it: a Spring Boot application with nothing set up but dependencies and properties. */
@SpringBootTest
class OrderServiceApplicationTest {

    /** Meters in memory, so that the test can read them (Spring Boot tests do not export metrics). */
    @TestConfiguration
    static class Meters {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Autowired
    OrderService orders;

    @Autowired
    JdbcClient jdbc;

    @Autowired
    MeterRegistry meters;

    private long idempotencyRows(String approvalNo) {
        return jdbc.sql("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?").param("ORDER:" + approvalNo)
                .query(Long.class).single();
    }

    private double calls(String outcome) {
        var counter = meters.find("idempotency.calls").tags("operation", "OrderService.createOrder",
                "outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void theAutoConfigurationSetItAllUp(@Autowired JdbcIdempotencyStore store, @Autowired IdempotentExecutor executor,
            @Autowired IdempotencyAdmin admin, @Autowired IdempotencyProperties properties) {
        assertThat(store.tableName()).isEqualTo("idempotency_record");
        assertThat(properties.getPurge().getInterval()).isEqualTo(Duration.ofMinutes(30));
        assertThat(properties.getPrefilter().getMaximumSize()).isEqualTo(5000);
        assertThat(executor).isNotNull();
        assertThat(admin).isNotNull();
    }

    @Test
    void theAdminListsTheOperationTheAnnotationProcessorFoundInTheSample(@Autowired IdempotencyAdmin admin) {
        assertThat(admin.operations()).as("compiled with idempotency-processor: its operations.json is read")
                .anySatisfy(op -> {
                    assertThat(op.name()).isEqualTo("OrderService.createOrder");
                    assertThat(op.className()).isEqualTo(OrderService.class.getName());
                    assertThat(op.tier()).isEqualTo(Tier.REVERSIBLE);
                    assertThat(op.key()).isEqualTo("'ORDER:' + #request.approvalNo()");
                });
    }

    @Test
    void aRetriedOrderIsPlacedOnceAndReplayedFromMemory() {
        OrderRequest request = new OrderRequest("APR-1", "espresso machine", 1);
        long before = orders.count();
        double replayedCached = calls("replayed_cached");

        OrderReceipt first = orders.createOrder(request);
        OrderReceipt retry;
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            retry = orders.createOrder(request);
            assertThat(scope.replayed()).isTrue();
        }

        assertThat(retry).isEqualTo(first);
        assertThat(orders.count()).isEqualTo(before + 1);
        assertThat(idempotencyRows("APR-1")).isEqualTo(1);
        assertThat(calls("replayed_cached")).isEqualTo(replayedCached + 1);
    }

    @Test
    void theSameApprovalWithAnotherOrderIsRefused() {
        orders.createOrder(new OrderRequest("APR-2", "grinder", 1));

        assertThatThrownBy(() -> orders.createOrder(new OrderRequest("APR-2", "grinder", 2)))
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }

    @Test
    void anOrderWhoseTransactionRolledBackLeavesNoTraceAndItsRetryRuns() {
        long before = orders.count();

        assertThatThrownBy(() -> orders.createOrder(new OrderRequest("APR-3", "kettle", 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(orders.count()).isEqualTo(before);
        assertThat(idempotencyRows("APR-3")).isZero();

        OrderReceipt placed = orders.createOrder(new OrderRequest("APR-3", "kettle", 1));
        assertThat(placed.quantity()).isEqualTo(1);
        assertThat(orders.count()).isEqualTo(before + 1);
    }

    @Test
    void thePropertiesApply() {
        orders.createOrder(new OrderRequest("APR-4", "scale", 1));
        var ttl = jdbc.sql("SELECT DATEDIFF('DAY', created_at, expires_at) FROM idempotency_record WHERE idem_key = ?")
                .param("ORDER:APR-4").query(Long.class).single();
        assertThat(ttl).isEqualTo(7); // idempotency.default-ttl=7d in application.properties
    }
}
