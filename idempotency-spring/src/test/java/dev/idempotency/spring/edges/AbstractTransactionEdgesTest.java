package dev.idempotency.spring.edges;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.spring.tiers.Tables;
import dev.idempotency.store.IdempotencyStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The edges of the transaction model (issue 10) through {@code @EnableIdempotency}, {@code @Transactional} and the
 * JDBC store behind a Caffeine pre-filter, on one database per subclass: savepoints, lost commit replies, checked
 * exceptions, irreversible effects inside a caller's transaction, methods that outlive their lease, read-only
 * transactions. Each test names what ran twice (or was replayed as a ghost) before the engine learned the edge.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractTransactionEdgesTest {

    private DataSource dataSource;
    private LosingCommitReplies losing;
    private Tables tables;
    private AnnotationConfigApplicationContext context;
    private EdgeService service;
    private TransactionTemplate outer;
    private final List<IdempotencyEvent.Outcome> outcomes = new CopyOnWriteArrayList<>();

    protected abstract DataSource openDataSource();

    protected abstract JdbcDialect dialect();

    protected abstract void closeDataSource(DataSource dataSource);

    @BeforeAll
    void start() {
        dataSource = openDataSource();
        losing = new LosingCommitReplies(dataSource);
        tables = Tables.unique();
        tables.create(dataSource, dialect());
        context = new AnnotationConfigApplicationContext();
        context.registerBean("dataSource", DataSource.class, () -> losing, bd -> bd.setDestroyMethodName(""));
        context.registerBean(Tables.class, () -> tables);
        context.registerBean(IdempotencyListener.class, () -> event -> outcomes.add(event.outcome()));
        context.register(EdgesConfiguration.class);
        context.refresh();
        service = context.getBean(EdgeService.class);
        outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
    }

    @AfterAll
    void stop() {
        try {
            if (context != null) {
                context.close();
            }
        } finally {
            try {
                tables.drop(dataSource);
            } finally {
                closeDataSource(dataSource);
            }
        }
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    // ---- 1. a savepoint rolled back is a rollback for everything done under it --------------------------------------

    @Test
    void aCallUnderASavepointThatRolledBackIsNeitherReplayedNorCachedAndItsEffectIsCompensated() {
        String id = unique("NESTED");
        TransactionTemplate nested = new TransactionTemplate(outer.getTransactionManager());
        nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
        outer.executeWithoutResult(status -> {
            try {
                nested.executeWithoutResult(inner -> {
                    service.order(id);
                    throw new IllegalStateException("a later step of the nested unit fails");
                });
            } catch (IllegalStateException expected) {
                // the outer transaction goes on, and commits
            }
        });
        assertThat(service.ledgerRows("order", id)).as("the savepoint took the order row away").isZero();
        assertThat(service.compensations()).as("the charge was refunded, once").containsOnlyOnce("order-" + id);

        // before: the pre-filter cached the outcome at the outer commit, and this retry got a receipt for an order
        // that does not exist
        assertThat(service.order(id)).isEqualTo("order-" + id);
        assertThat(service.ledgerRows("order", id)).isEqualTo(1);
        assertThat(service.effects("charge:" + id)).isEqualTo(2);
        assertThat(service.order(id)).isEqualTo("order-" + id);
        assertThat(service.effects("charge:" + id)).as("replayed once committed").isEqualTo(2);
    }

    // ---- 2. a lost commit reply is neither a rollback nor a commit ----------------------------------------------------

    @Test
    void aCommitWhoseReplyWasLostIsNotCompensatedAndTheRetryReplaysIt() {
        String id = unique("LOST");
        losing.loseNextCommitReply();
        assertThatThrownBy(() -> service.order(id)).isInstanceOf(TransactionSystemException.class);
        // the commit did reach the database
        assertThat(service.ledgerRows("order", id)).isEqualTo(1);
        // before: the unknown outcome counted as a rollback and the charge was refunded
        assertThat(service.compensations()).doesNotContain("order-" + id);

        assertThat(service.order(id)).isEqualTo("order-" + id);
        assertThat(service.effects("charge:" + id)).isEqualTo(1);
        assertThat(service.ledgerRows("order", id)).isEqualTo(1);
    }

    // ---- 3. a checked exception never commits half a call -----------------------------------------------------------

    @Test
    void aCheckedExceptionRollsBackTheMethodsWritesWithItsClaim() throws IOException {
        String id = unique("CHECKED");
        assertThatThrownBy(() -> service.orderOrFailChecked(id, true)).isInstanceOf(IOException.class)
                .hasMessageContaining(id);
        // before: Spring committed the row (checked exceptions commit by default) but the claim was deleted in it
        assertThat(service.ledgerRows("checked", id)).isZero();

        assertThat(service.orderOrFailChecked(id, false)).isEqualTo("order-" + id);
        assertThat(service.ledgerRows("checked", id)).isEqualTo(1);
    }

    // ---- 4. an irreversible effect is never repeated ---------------------------------------------------------------

    @Test
    void anIrreversibleCallWhoseCallerRolledBackIsHeldForReviewNotRunAgain() {
        String id = unique("PAYOUT");
        assertThatThrownBy(() -> outer.executeWithoutResult(status -> {
            assertThat(service.payout(id)).isEqualTo("paid-" + id);
            throw new IllegalStateException("the caller fails after the payout");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(service.ledgerRows("payout", id)).isZero();

        // before: the claim vanished with the caller's transaction and this retry paid out a second time
        assertThatThrownBy(() -> service.payout(id)).isInstanceOf(IdempotencyOutcomeUnknownException.class)
                .hasMessageContaining(id);
        assertThat(service.effects("payout:" + id)).isEqualTo(1);
    }

    @Test
    void anIrreversibleCallThatThrowsAnExceptionOfUnknownOutcomeIsHeldForReview() {
        String id = unique("TIMEOUT");
        service.endPayout(id, "timeout");
        assertThatThrownBy(() -> service.payout(id)).isInstanceOf(IllegalStateException.class);
        service.endPayout(id, "ok");
        // before: the exception released the key and the retry paid out again
        assertThatThrownBy(() -> service.payout(id)).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(service.effects("payout:" + id)).isEqualTo(1);
    }

    @Test
    void anIrreversibleCallThatThrowsAReleaseOnExceptionRunsAgain() {
        String id = unique("REFUSED");
        service.endPayout(id, "refused");
        assertThatThrownBy(() -> service.payout(id)).isInstanceOf(EdgeService.GatewayRefusedException.class);
        service.endPayout(id, "ok");
        assertThat(service.payout(id)).isEqualTo("paid-" + id);
        assertThat(service.payout(id)).isEqualTo("paid-" + id);
        assertThat(service.effects("payout:" + id)).isEqualTo(1);
        assertThat(service.ledgerRows("payout", id)).isEqualTo(1);
    }

    @Test
    void anIrreversibleCallThatCommittedIsReplayed() {
        String id = unique("PAID");
        outer.executeWithoutResult(status -> assertThat(service.payout(id)).isEqualTo("paid-" + id));
        assertThat(service.payout(id)).isEqualTo("paid-" + id);
        assertThat(service.effects("payout:" + id)).isEqualTo(1);
    }

    // ---- 5. a lease lives as long as the work ----------------------------------------------------------------------

    @Test
    void aMethodThatRunsTenTimesItsLockTimeoutRunsOnceAndReturnsItsResult() throws Exception {
        String id = unique("SLOW");
        CountDownLatch started = new CountDownLatch(1);
        service.onSlowStart(id, started);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> slow(id, 2_000));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        // a duplicate while it runs waits its lock timeout, then is told it is in progress, never run a second time
        // (before: the lease of 3 x 200 ms ran out, the duplicate took the claim over and ran it again)
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> service.slow(id, 0)).isInstanceOf(IdempotencyInProgressException.class);
        }
        assertThat(first.get(20, TimeUnit.SECONDS)).isEqualTo("slow-" + id);
        assertThat(service.slow(id, 2_000)).isEqualTo("slow-" + id);
        assertThat(service.effects("slow:" + id)).isEqualTo(1);
    }

    private String slow(String id, long millis) {
        try {
            return service.slow(id, millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- 6. read-only transactions, the same on every database ------------------------------------------------------

    @Test
    void aClaimInsideAReadOnlyTransactionFailsBeforeTheMethodRuns() {
        String id = unique("RO");
        assertThatThrownBy(() -> service.inReadOnlyTransaction(id)).isExactlyInstanceOf(IdempotencyException.class)
                .hasMessageContaining("inReadOnlyTransaction").hasMessageContaining("read-only");
        assertThat(service.effects("read-only:" + id)).isZero();
    }

    // ---- 7. metrics count what committed --------------------------------------------------------------------------

    @Test
    void aCallWhoseTransactionRolledBackIsCountedAsRolledBackNotExecuted() {
        String id = unique("COUNTED");
        outcomes.clear();
        assertThatThrownBy(() -> outer.executeWithoutResult(status -> {
            service.order(id);
            throw new IllegalStateException("the caller fails");
        })).isInstanceOf(IllegalStateException.class);
        service.order(id);
        assertThat(outcomes).containsExactly(IdempotencyEvent.Outcome.ROLLED_BACK, IdempotencyEvent.Outcome.EXECUTED);
    }

    // ---- 8. a duplicate the pre-filter holds takes no connection ----------------------------------------------------

    @Test
    void duplicatesThePrefilterHoldsFromManyThreadsRunNothingAndBorrowNoConnection() throws Exception {
        String id = unique("HELD");
        String receipt = service.order(id);
        int before = outcomes.size();
        int borrowed = losing.borrowed();

        int threads = 16;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<CompletableFuture<String>> calls = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                calls.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return service.order(id);
                }, pool));
            }
            go.countDown();
            for (CompletableFuture<String> call : calls) {
                assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo(receipt);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(losing.borrowed() - borrowed).as("connections borrowed by the duplicates").isZero();
        assertThat(service.ledgerRows("order", id)).isEqualTo(1);
        assertThat(service.effects("charge:" + id)).isEqualTo(1);
        assertThat(outcomes.subList(before, outcomes.size())).hasSize(threads)
                .containsOnly(IdempotencyEvent.Outcome.REPLAYED_CACHED);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableIdempotency
    static class EdgesConfiguration {

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        IdempotencyStore idempotencyStore(DataSource dataSource, Tables tables) {
            return CaffeinePrefilter.wrap(JdbcIdempotencyStore.builder(dataSource).tableName(tables.idempotency())
                    .build()).transactions(SpringTransactionBridge.INSTANCE).build();
        }

        @Bean
        EdgeService edgeService(DataSource dataSource, Tables tables) {
            return new EdgeService(new JdbcTemplate(dataSource), tables);
        }
    }

}
