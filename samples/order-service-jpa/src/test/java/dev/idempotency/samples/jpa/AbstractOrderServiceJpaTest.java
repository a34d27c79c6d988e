package dev.idempotency.samples.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyContext;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.spring.boot.IdempotencyProperties;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceContext;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.hibernate.Session;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.tools.jdbc.JDBCUtils;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The sample as its users run it, on one database per subclass: JPA (Hibernate, Spring Data JPA,
 * {@link JpaTransactionManager}) and the idempotency starter, with the pre-filter on. Each test names what a user
 * relies on: the claim commits or vanishes with the entities, duplicates run once, a rollback frees the key, and a
 * commit that fails at Hibernate's flush is never replayed.
 */
@SpringBootTest
@Import({ RecordedOutcomes.class, FlushingOrderService.class })
abstract class AbstractOrderServiceJpaTest {

    @Autowired
    OrderService orders;

    @Autowired
    OrderRepository repository;

    @Autowired
    DataSource dataSource;

    @Autowired
    PlatformTransactionManager transactionManager;

    @Autowired
    RecordedOutcomes outcomes;

    @PersistenceContext
    EntityManager entityManager;

    /** Plain JDBC on the pool, outside any transaction: sees only what committed. */
    JdbcTemplate committed;

    @BeforeEach
    void setUp() {
        committed = new JdbcTemplate(dataSource);
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Committed orders with this number. */
    private long orderRows(String orderNo) {
        return committed.queryForObject("SELECT COUNT(*) FROM orders WHERE order_no = ?", Long.class, orderNo);
    }

    /** Committed idempotency records of this key of {@link OrderService#placeOrder}. */
    private long idempotencyRows(String key) {
        return idempotencyRecords("ORDER:" + key);
    }

    /** Committed idempotency records of this key, as the store writes it. */
    private long idempotencyRecords(String storedKey) {
        return committed.queryForObject("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", Long.class,
                storedKey);
    }

    /** The outcomes published for this key of {@link OrderService#placeOrder}, in order. */
    private List<IdempotencyEvent.Outcome> outcomesOf(String key) {
        return outcomesOfStored("ORDER:" + key);
    }

    /** The outcomes published for this key, as the store writes it, in order. */
    private List<IdempotencyEvent.Outcome> outcomesOfStored(String storedKey) {
        return outcomes.events.stream().filter(e -> e.key().equals(storedKey)).map(IdempotencyEvent::outcome)
                .toList();
    }

    /** Rows of the query, read on a connection of its own (what another transaction sees). */
    private long countElsewhere(String sql, String parameter) throws SQLException {
        try (Connection con = dataSource.getConnection(); PreparedStatement ps = con.prepareStatement(sql)) {
            ps.setString(1, parameter);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Rows of the query, read through the entity manager: in its transaction, on its connection. */
    private long countInTransaction(String sql, String parameter) {
        return ((Number) entityManager.createNativeQuery(sql).setParameter(1, parameter).getSingleResult())
                .longValue();
    }

    @Test
    void theApplicationRunsOnJpaWithThePrefilter(@Autowired IdempotencyProperties properties) {
        assertThat(transactionManager).isInstanceOf(JpaTransactionManager.class);
        assertThat(((JpaTransactionManager) transactionManager).getDataSource()).as("exposes its JDBC connection")
                .isSameAs(dataSource);
        assertThat(properties.getPrefilter().getEnabled()).isTrue();
    }

    // ---- 1. the claim is in the JPA transaction ---------------------------------------------------------------------

    @Test
    void theClaimIsWrittenOnTheJpaTransactionsConnectionAndVanishesWithTheEntities() throws SQLException {
        String key = unique("K");
        String orderNo = unique("ORD");
        OrderRequest request = new OrderRequest(orderNo, "grinder", 1);
        TransactionTemplate tx = new TransactionTemplate(transactionManager);

        tx.executeWithoutResult(status -> {
            orders.placeOrder(key, request);
            try {
                // the connection the JDBC store takes (DataSourceUtils) is the one Hibernate's session writes on
                Connection storeConnection = DataSourceUtils.getConnection(dataSource);
                Connection hibernateConnection = entityManager.unwrap(Session.class).doReturningWork(c -> c);
                assertThat(storeConnection).isSameAs(hibernateConnection);
                assertThat(DataSourceUtils.isConnectionTransactional(storeConnection, dataSource)).isTrue();

                entityManager.flush();
                // both rows are there in this transaction, and uncommitted: another connection sees neither
                assertThat(countInTransaction("SELECT COUNT(*) FROM orders WHERE order_no = ?", orderNo)).isEqualTo(1);
                assertThat(countInTransaction("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?",
                        "ORDER:" + key)).isEqualTo(1);
                assertThat(countElsewhere("SELECT COUNT(*) FROM orders WHERE order_no = ?", orderNo)).isZero();
                assertThat(countElsewhere("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?",
                        "ORDER:" + key)).isZero();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
            status.setRollbackOnly(); // the caller fails after the order was placed
        });

        assertThat(orderRows(orderNo)).isZero();
        assertThat(idempotencyRows(key)).as("the claim vanished with the order").isZero();

        // the retry runs, and commits both
        OrderReceipt placed = orders.placeOrder(key, request);
        assertThat(orderRows(orderNo)).isEqualTo(1);
        assertThat(idempotencyRows(key)).isEqualTo(1);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK,
                IdempotencyEvent.Outcome.EXECUTED);
        assertThat(orders.placeOrder(key, request)).isEqualTo(placed);
    }

    @Test
    void aRetryReplaysTheRecordedReceiptAndPlacesNothing() {
        String key = unique("K");
        OrderRequest request = new OrderRequest(unique("ORD"), "espresso machine", 1);
        long before = repository.count();

        OrderReceipt first = orders.placeOrder(key, request);
        OrderReceipt retry;
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            retry = orders.placeOrder(key, request);
            assertThat(scope.replayed()).isTrue();
        }

        assertThat(retry).isEqualTo(first);
        assertThat(repository.count()).isEqualTo(before + 1);
        assertThat(orderRows(request.orderNo())).isEqualTo(1);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    // ---- 2. concurrent duplicates -------------------------------------------------------------------------------------

    @Test
    void sixteenConcurrentDuplicatesPlaceOneOrderAndAllGetItsReceipt() throws Exception {
        String key = unique("K");
        OrderRequest request = new OrderRequest(unique("ORD"), "kettle", 2);
        int threads = 16;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<OrderReceipt> receipts = new ArrayList<>();
        try {
            List<CompletableFuture<OrderReceipt>> calls = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return orders.placeOrder(key, request);
                }, pool));
            }
            go.countDown();
            for (CompletableFuture<OrderReceipt> call : calls) {
                receipts.add(call.get(60, TimeUnit.SECONDS)); // a constraint error or a timeout fails here
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(receipts).hasSize(threads).containsOnly(receipts.get(0));
        assertThat(orderRows(request.orderNo())).isEqualTo(1);
        assertThat(idempotencyRows(key)).isEqualTo(1);
        assertThat(outcomesOf(key)).hasSize(threads).containsOnlyOnce(IdempotencyEvent.Outcome.EXECUTED)
                .filteredOn(o -> o != IdempotencyEvent.Outcome.EXECUTED)
                .allMatch(o -> o == IdempotencyEvent.Outcome.REPLAYED || o == IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    // ---- 3. a rollback frees the key --------------------------------------------------------------------------------

    @Test
    void aMethodThatThrowsAfterSavingLeavesNoOrderAndNoRecordAndTheKeyRunsAgain() {
        String key = unique("K");
        String orderNo = unique("ORD");

        assertThatThrownBy(() -> orders.placeOrder(key, new OrderRequest(orderNo, "scale", 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(orderRows(orderNo)).isZero();
        assertThat(idempotencyRows(key)).isZero();

        // the client corrects the order and retries under the same key: nothing was recorded, so it runs, once
        OrderRequest corrected = new OrderRequest(orderNo, "scale", 1);
        OrderReceipt placed = orders.placeOrder(key, corrected);
        assertThat(placed.quantity()).isEqualTo(1);
        assertThat(orders.placeOrder(key, corrected)).isEqualTo(placed);
        assertThat(orderRows(orderNo)).isEqualTo(1);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.FAILED,
                IdempotencyEvent.Outcome.EXECUTED, IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    @Test
    void aCallerThatRollsBackAfterTheOrderFreesTheKeyAndTheRetryRunsOnce() {
        String key = unique("K");
        OrderRequest request = new OrderRequest(unique("ORD"), "mill", 1);
        TransactionTemplate tx = new TransactionTemplate(transactionManager);

        assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
            orders.placeOrder(key, request);
            throw new IllegalStateException("the caller fails after placing the order");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(orderRows(request.orderNo())).isZero();
        assertThat(idempotencyRows(key)).isZero();

        OrderReceipt placed = orders.placeOrder(key, request);
        assertThat(orders.placeOrder(key, request)).isEqualTo(placed);
        assertThat(orderRows(request.orderNo())).isEqualTo(1);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK,
                IdempotencyEvent.Outcome.EXECUTED, IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    // ---- 4. a commit that fails at the flush -------------------------------------------------------------------------

    /**
     * Places the order twice while its number is taken: each attempt runs, fails with the database's error and
     * leaves no record of {@code storedKey}; the order of that number stays the one that took it.
     */
    private void failTwiceLeavingNoRecord(ThrowingCallable placeOrder, String storedKey, String orderNo) {
        for (int attempt = 0; attempt < 2; attempt++) {
            assertThatThrownBy(placeOrder).as("attempt %d", attempt)
                    .isInstanceOf(DataIntegrityViolationException.class);
            assertThat(idempotencyRecords(storedKey)).as("no record of the failed attempt").isZero();
            assertThat(orderRows(orderNo)).isEqualTo(1);
        }
    }

    @Test
    void anOrderWhoseCommitFailsAtTheFlushIsNeverReplayedAndItsKeyRunsAgain() {
        String orderNo = unique("ORD");
        OrderRequest request = new OrderRequest(orderNo, "grinder", 1);
        OrderReceipt taken = orders.placeOrder(unique("FIRST"), request);
        String key = unique("K");

        // another key, the same order number: the claim succeeds, the method returns its receipt, and the insert
        // that Hibernate flushes at the commit violates the unique order number (a replay would return instead)
        failTwiceLeavingNoRecord(() -> orders.placeOrder(key, request), "ORDER:" + key, orderNo);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK,
                IdempotencyEvent.Outcome.ROLLED_BACK);

        // the conflict goes; the same key now runs, once, and is replayed from then on
        repository.deleteById(taken.orderId());
        OrderReceipt placed;
        try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
            placed = orders.placeOrder(key, request);
            assertThat(scope.replayed()).isFalse();
        }
        assertThat(placed.orderId()).isNotEqualTo(taken.orderId());
        assertThat(orders.placeOrder(key, request)).isEqualTo(placed);
        assertThat(orderRows(orderNo)).isEqualTo(1);
        assertThat(idempotencyRows(key)).isEqualTo(1);
        assertThat(outcomesOf(key)).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK,
                IdempotencyEvent.Outcome.ROLLED_BACK, IdempotencyEvent.Outcome.EXECUTED,
                IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    @Test
    void anOrderWhoseFlushFailsInsideTheMethodGetsTheDatabasesErrorAndItsKeyRunsAgain(
            @Autowired FlushingOrderService flushing) {
        String orderNo = unique("ORD");
        OrderRequest request = new OrderRequest(orderNo, "tray", 1);
        OrderReceipt taken = orders.placeOrder(unique("FIRST"), request);
        String key = unique("K");

        // the caller gets the database's error, not a failure of the store (whose release of the claim, in a
        // transaction PostgreSQL has aborted, is what rolls back anyway)
        failTwiceLeavingNoRecord(() -> flushing.placeOrder(key, request), "FLUSHED:" + key, orderNo);
        assertThat(outcomesOfStored("FLUSHED:" + key)).containsExactly(IdempotencyEvent.Outcome.FAILED,
                IdempotencyEvent.Outcome.FAILED);

        repository.deleteById(taken.orderId());
        OrderReceipt placed = flushing.placeOrder(key, request);
        assertThat(flushing.placeOrder(key, request)).isEqualTo(placed);
        assertThat(orderRows(orderNo)).isEqualTo(1);
        assertThat(idempotencyRecords("FLUSHED:" + key)).isEqualTo(1);
    }

    // ---- what docs/jpa.md says of open-in-view and of jOOQ ------------------------------------------------------------

    @Test
    void hibernateHoldsTheConnectionItTookUntilTheEntityManagerCloses(
            @Autowired EntityManagerFactory entityManagerFactory) {
        assertThat(entityManagerFactory.getProperties().get("hibernate.connection.handling_mode"))
                .hasToString("DELAYED_ACQUISITION_AND_HOLD");
    }

    @Test
    void jooqOnATransactionAwareProxyWorksInTheClaimsTransactionAndOnTheBareDataSourceDoesNot() throws SQLException {
        String key = unique("K");
        OrderRequest request = new OrderRequest(unique("ORD"), "cup", 1);
        SQLDialect dialect;
        try (Connection con = dataSource.getConnection()) {
            dialect = JDBCUtils.dialect(con);
        }
        DSLContext joined = DSL.using(new TransactionAwareDataSourceProxy(dataSource), dialect);
        DSLContext bare = DSL.using(dataSource, dialect);
        Condition claimed = DSL.field("idem_key").eq("ORDER:" + key);
        Condition ordered = DSL.field("order_no").eq(request.orderNo());

        new TransactionTemplate(transactionManager).executeWithoutResult(status -> {
            orders.placeOrder(key, request);
            entityManager.flush();
            assertThat(joined.fetchCount(DSL.table("idempotency_record"), claimed)).isEqualTo(1);
            assertThat(joined.fetchCount(DSL.table("orders"), ordered)).isEqualTo(1);
            assertThat(bare.fetchCount(DSL.table("idempotency_record"), claimed))
                    .as("another connection: the claim is not committed yet").isZero();
            assertThat(bare.fetchCount(DSL.table("orders"), ordered)).isZero();
            status.setRollbackOnly();
        });
        assertThat(idempotencyRows(key)).isZero();
    }
}
