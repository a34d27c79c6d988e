package dev.idempotency.spring.tiers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.ResultType;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.tiers.Checkout.PaymentDeclinedException;
import dev.idempotency.spring.tiers.TierService.Hold;
import dev.idempotency.spring.tiers.TierService.OrderPlaced;
import dev.idempotency.spring.tiers.TierService.RefundReceipt;
import dev.idempotency.spring.tiers.TierService.Reservation;
import dev.idempotency.spring.tiers.TierService.TransferReceipt;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.tck.MutableClock;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every row of the tier table (docs/tiers.md) as a user meets it: through {@code @EnableIdempotency}, the aspect and a
 * {@code @Service} with {@code @Idempotent} (and {@code @Transactional}) methods, on the JDBC store, with the
 * {@code IdempotencyAdmin} bean that {@code @EnableIdempotency} registers. One body for every database: a subclass
 * supplies the {@code DataSource} and its dialect; the class gets its own uniquely named tables, dropped at the end.
 *
 * <p>A crash between claim and result is an attempt, made with no transaction, whose store fails when it records
 * the result or releases the claim ({@link CrashableStore}): its claim stays committed {@code IN_FLIGHT} with no
 * result. The lease then runs out by moving the context's {@code Clock} bean, never by sleeping.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractSpringTierRulesTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private static final int THREADS = 8;

    private DataSource dataSource;
    private Tables tables;
    private AnnotationConfigApplicationContext context;
    private JdbcTemplate jdbc;

    @Autowired TierService tiers;
    @Autowired Checkout checkout;
    @Autowired IdempotencyAdmin admin;
    @Autowired MutableClock clock;
    @Autowired CrashableStore store;
    @Autowired World world;

    /** A data source on the database under test; unreachable, it must fail, never skip. */
    protected abstract DataSource openDataSource();

    protected abstract JdbcDialect dialect();

    protected abstract void closeDataSource(DataSource dataSource);

    /** The configuration that brings {@code @EnableIdempotency} in the mode under test: the proxy, by default. */
    protected Class<?> adviceConfiguration() {
        return ProxyMode.class;
    }

    /** {@code @EnableIdempotency} in its default mode (not nested in TierRulesConfiguration: it would be imported). */
    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class ProxyMode {
    }

    @BeforeAll
    void start() {
        dataSource = openDataSource();
        jdbc = new JdbcTemplate(dataSource);
        tables = Tables.unique();
        tables.create(dataSource, dialect());
        context = new AnnotationConfigApplicationContext();
        // the test closes the data source after dropping its tables: the context must not close it first
        context.registerBean("dataSource", DataSource.class, () -> dataSource, bd -> bd.setDestroyMethodName(""));
        context.registerBean(Tables.class, () -> tables);
        context.register(TierRulesConfiguration.class, adviceConfiguration());
        context.refresh();
        context.getAutowireCapableBeanFactory().autowireBean(this);
    }

    @AfterAll
    void stop() {
        try {
            if (context != null) {
                context.close();
            }
        } finally {
            if (dataSource != null) {
                try {
                    tables.drop(dataSource);
                } finally {
                    closeDataSource(dataSource);
                }
            }
        }
    }

    @BeforeEach
    void alive() {
        store.dying.set(false);
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** The status of a key's row, read with SQL from the table itself; null when there is no row. */
    private @Nullable String status(String operation, String key) {
        List<String> rows = jdbc.queryForList("SELECT status FROM " + tables.idempotency()
                + " WHERE operation = ? AND idem_key = ?", String.class, operation, key);
        assertThat(rows).hasSizeLessThanOrEqualTo(1);
        return rows.isEmpty() ? null : rows.get(0);
    }

    private int rows(String operation) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM " + tables.idempotency() + " WHERE operation = ?",
                Integer.class, operation);
        return n == null ? 0 : n;
    }

    // READ_ONLY ---------------------------------------------------------------------------------------------------

    @Test
    void readOnlyNeverTouchesTheStoreEvenWithAKey() {
        String sku = unique("SKU");
        int calls = store.calls.get();

        assertThat(tiers.quote(sku)).isEqualTo(tiers.quote(sku));

        assertThat(world.quotes).as("a read-only method runs every time").hasValue(2);
        assertThat(store.calls).as("no store call at all").hasValue(calls);
        assertThat(rows("TierService.quote")).isZero();
        assertThat(admin.find("TierService.quote", "SKU:" + sku)).isEmpty();
    }

    // REVERSIBLE --------------------------------------------------------------------------------------------------

    @Test
    void reversibleADuplicateReplaysTheRecordedResultWithoutRunning() {
        String orderNo = unique("O");
        int before = world.orders.get();

        OrderPlaced first = tiers.placeOrder(orderNo, 2);
        OrderPlaced second = tiers.placeOrder(orderNo, 2);

        assertThat(second).isEqualTo(first).isNotSameAs(first);
        assertThat(world.orders.get() - before).isEqualTo(1);
        assertThat(tiers.ledgerRows("ORDER", orderNo)).isEqualTo(1);
        assertThat(status("TierService.placeOrder", "ORDER:" + orderNo)).isEqualTo(Status.COMPLETED.name());
    }

    @Test
    void reversibleACrashedClaimIsTakenOverByExactlyOneOfManyCallersOnceItsLeaseRanOut() throws Exception {
        String orderNo = unique("O");
        String key = "RESERVE:" + orderNo;
        int before = world.reservations.get();

        // the first attempt reserves the stock, then the process dies before the outcome is recorded
        store.dying.set(true);
        assertThatThrownBy(() -> tiers.reserveStock(orderNo, 3, "trace-crashed"))
                .isInstanceOfSatisfying(IdempotencyStoreException.class, e -> assertThat(e.methodRan()).isTrue());
        store.dying.set(false);
        assertThat(world.reservations.get() - before).isEqualTo(1);
        assertThat(status("TierService.reserveStock", key)).as("committed on its own, no result")
                .isEqualTo(Status.IN_FLIGHT.name());

        // the lease is three lock timeouts (15s): just short of it the claim still counts as running
        clock.advance(Duration.ofSeconds(14));
        assertThat(admin.find("TierService.reserveStock", key).orElseThrow().stale()).isFalse();
        clock.advance(Duration.ofSeconds(2));
        assertThat(admin.find("TierService.reserveStock", key).orElseThrow().stale()).isTrue();

        List<Object> outcomes = concurrently(i -> tiers.reserveStock(orderNo, 3, "trace-" + i));

        assertThat(world.reservations.get() - before).as("one takeover ran the method once more").isEqualTo(2);
        assertThat(outcomes).hasSize(THREADS).allSatisfy(o -> assertThat(o).isInstanceOf(Reservation.class));
        assertThat(outcomes).containsOnly(outcomes.get(0));
        assertThat(((Reservation) outcomes.get(0)).attempt()).isEqualTo(before + 2);
        assertThat(status("TierService.reserveStock", key)).isEqualTo(Status.COMPLETED.name());
        assertThat(tiers.reserveStock(orderNo, 3, "trace-later")).isEqualTo(outcomes.get(0));
        assertThat(world.reservations.get() - before).isEqualTo(2);
    }

    @Test
    void reversibleWithinItsLeaseACrashedClaimStillCountsAsRunningAndIsNotTakenOver() {
        String shipmentId = unique("S");
        int before = world.labels.get();
        store.dying.set(true);
        assertThatThrownBy(() -> tiers.printLabel(shipmentId)).isInstanceOf(IdempotencyStoreException.class);
        store.dying.set(false);

        // the clock stands still: the lease (three 300ms lock timeouts) has not run out, the attempt may be running
        assertThatThrownBy(() -> tiers.printLabel(shipmentId))
                .isInstanceOfSatisfying(IdempotencyInProgressException.class,
                        e -> assertThat(e.key()).isEqualTo("LABEL:" + shipmentId));
        assertThat(world.labels.get() - before).isEqualTo(1);
        assertThat(status("TierService.printLabel", "LABEL:" + shipmentId)).isEqualTo(Status.IN_FLIGHT.name());

        clock.advance(Duration.ofSeconds(1));
        String label = tiers.printLabel(shipmentId);
        assertThat(label).isEqualTo("label-" + shipmentId + "-" + (before + 2));
        assertThat(tiers.printLabel(shipmentId)).isEqualTo(label);
        assertThat(world.labels.get() - before).isEqualTo(2);
    }

    @Test
    void reversibleTheCompensationRunsOnceAfterTheCallersRollbackAndTheRetryRuns() {
        String orderNo = unique("O");
        BigDecimal amount = new BigDecimal("49.90");
        int before = world.holds.get();
        int releasesBefore = world.releases.size();

        // the checkout's own transaction rolls back after holdFunds returned: the hold must be released
        Hold declined = null;
        try {
            checkout.holdThenDecline(orderNo, amount);
        } catch (PaymentDeclinedException e) {
            declined = e.hold();
        }
        assertThat(declined).as("the checkout declined after the hold").isNotNull();

        List<World.Release> releases = world.releases.subList(releasesBefore, world.releases.size());
        assertThat(releases).as("compensated exactly once, with the result of the undone attempt")
                .containsExactly(new World.Release(declined, 0, false));
        // ledgerRows 0 and claimVisible false: it ran after the rollback had removed the hold's row and the claim
        assertThat(tiers.ledgerRows("HOLD", orderNo)).isZero();
        assertThat(status("TierService.holdFunds", "HOLD:" + orderNo)).isNull();

        Hold retried = tiers.holdFunds(orderNo, amount);
        Hold replayed = tiers.holdFunds(orderNo, amount);

        assertThat(world.holds.get() - before).as("the retry ran, its duplicate replayed").isEqualTo(2);
        assertThat(retried).isNotEqualTo(declined);
        assertThat(replayed).isEqualTo(retried);
        assertThat(tiers.ledgerRows("HOLD", orderNo)).isEqualTo(1);
        assertThat(world.releases.size() - releasesBefore).as("a committed call is never compensated").isEqualTo(1);
    }

    // IRREVERSIBLE ------------------------------------------------------------------------------------------------

    /** A refund whose attempt crashed after sending it, seen after its lease: now under review. Returns its key. */
    private String crashedRefundUnderReview(String refundId, BigDecimal amount, int refundsBefore) {
        String key = "REFUND:" + refundId;
        store.dying.set(true);
        assertThatThrownBy(() -> tiers.refund(refundId, amount)).isInstanceOf(IdempotencyStoreException.class);
        store.dying.set(false);
        assertThat(status("TierService.refund", key)).isEqualTo(Status.IN_FLIGHT.name());

        clock.advance(Duration.ofSeconds(31)); // past the lease of three 10s lock timeouts
        assertThatThrownBy(() -> tiers.refund(refundId, amount))
                .isInstanceOfSatisfying(IdempotencyOutcomeUnknownException.class, e -> {
                    assertThat(e.operation()).isEqualTo("TierService.refund");
                    assertThat(e.key()).isEqualTo(key);
                });
        assertThat(status("TierService.refund", key)).isEqualTo(Status.NEEDS_REVIEW.name());

        clock.advance(Duration.ofDays(30)); // a review waits for a human, however long
        assertThatThrownBy(() -> tiers.refund(refundId, amount))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(status("TierService.refund", key)).isEqualTo(Status.NEEDS_REVIEW.name());
        assertThat(world.refunds.get() - refundsBefore).as("the refund is never sent twice").isEqualTo(1);
        return key;
    }

    @Test
    void irreversibleACrashedClaimStopsForReviewAndResolvedAsExecutedLaterCallsReplayTheResolution() {
        String refundId = unique("R");
        BigDecimal amount = new BigDecimal("120.00");
        int before = world.refunds.get();
        String key = crashedRefundUnderReview(refundId, amount, before);

        IdempotencyAdmin.Entry entry = admin.find("TierService.refund", key).orElseThrow();
        assertThat(entry.status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(entry.hasResult()).isFalse();

        // the operator asked the gateway: the refund went out as gw-checked
        RefundReceipt resolution = new RefundReceipt(refundId, amount, "gw-checked");
        assertThat(admin.resolveExecuted("TierService.refund", key, resolution, ResultType.of(RefundReceipt.class),
                Duration.ofDays(7), BY)).isTrue();

        assertThat(tiers.refund(refundId, amount)).isEqualTo(resolution);
        assertThat(tiers.refund(refundId, amount)).isEqualTo(resolution);
        assertThat(world.refunds.get() - before).isEqualTo(1);
        assertThat(status("TierService.refund", key)).isEqualTo(Status.COMPLETED.name());
    }

    @Test
    void irreversibleACrashedClaimStopsForReviewAndReleasedTheNextCallRuns() {
        String refundId = unique("R");
        BigDecimal amount = new BigDecimal("80.00");
        int before = world.refunds.get();
        String key = crashedRefundUnderReview(refundId, amount, before);

        // the operator asked the gateway: the refund never went out
        assertThat(admin.release("TierService.refund", key, BY)).isTrue();
        assertThat(status("TierService.refund", key)).isNull();

        RefundReceipt sent = tiers.refund(refundId, amount);
        assertThat(tiers.refund(refundId, amount)).isEqualTo(sent);
        assertThat(world.refunds.get() - before).as("sent once more, once").isEqualTo(2);
        assertThat(sent.gatewayRef()).isEqualTo("gw-" + world.refunds.get());
        assertThat(status("TierService.refund", key)).isEqualTo(Status.COMPLETED.name());
    }

    @Test
    void irreversibleTheGateRefusesTheFirstRunUntilTheSameCallIsResentWithItsConfirmation() {
        String transferId = unique("T");
        String key = "TRANSFER:" + transferId;
        BigDecimal amount = new BigDecimal("1500.00");
        int before = world.transfers.get();

        assertThatThrownBy(() -> tiers.transfer(transferId, amount, null))
                .isInstanceOfSatisfying(ConfirmationRequiredException.class, e -> {
                    assertThat(e.key()).isEqualTo(key);
                    assertThat(e.operation()).isEqualTo(TierRulesConfiguration.GATED_OPERATION);
                });
        assertThat(world.transfers.get() - before).isZero();
        assertThat(status("TierService.transfer", key)).as("a refusal leaves no claim").isNull();
        assertThat(tiers.ledgerRows("TRANSFER", transferId)).isZero();

        // the same call resent with its confirmation (an ignored parameter: the fingerprint matches) runs
        TransferReceipt done = tiers.transfer(transferId, amount, TierRulesConfiguration.CONFIRMED);
        // a duplicate, confirmed or not, replays without asking the gate again
        assertThat(tiers.transfer(transferId, amount, null)).isEqualTo(done);

        assertThat(world.transfers.get() - before).isEqualTo(1);
        assertThat(tiers.ledgerRows("TRANSFER", transferId)).isEqualTo(1);
        assertThat(status("TierService.transfer", key)).isEqualTo(Status.COMPLETED.name());
        assertThat(world.gateAsked).filteredOn(c -> c.key().equals(key)).extracting(ConfirmationGate.Call::key)
                .hasSize(2);
    }

    @FunctionalInterface
    private interface Caller {
        Object call(int index) throws Exception;
    }

    /** Runs {@code caller} on {@value #THREADS} threads released together; each one's result or exception. */
    private static List<Object> concurrently(Caller caller) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Object>> futures = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                int index = i;
                Callable<Object> task = () -> {
                    start.await();
                    try {
                        return caller.call(index);
                    } catch (RuntimeException e) {
                        return e;
                    }
                };
                futures.add(pool.submit(task));
            }
            List<Object> outcomes = new ArrayList<>();
            for (Future<Object> f : futures) {
                outcomes.add(f.get(60, TimeUnit.SECONDS));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }
}
