package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.ClaimResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/** Transactions on PostgreSQL: the shared two-transaction cases, plus lock_timeout and REPEATABLE READ. */
@EnabledIfEnvironmentVariable(named = RealDatabase.POSTGRES_URL, matches = ".+")
class PostgresTransactionIT extends AbstractTransactionBehaviourTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.postgres(8);

    @Override
    protected RealDatabase database() {
        return database;
    }

    @Override
    protected boolean isWaitingForLock(String table) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity"
                + " WHERE wait_event_type = 'Lock' AND query LIKE '%' || ? || ' %'", Integer.class, table) > 0;
    }

    /** READ COMMITTED: PostgreSQL's default, and the level where ON CONFLICT DO NOTHING never needs a retry. */
    @Override
    protected int isolationUnderLoad() {
        return TransactionDefinition.ISOLATION_READ_COMMITTED;
    }

    @Override
    protected String lockDiagnostics() {
        return jdbc.queryForList("SELECT wait_event_type, state, query FROM pg_stat_activity"
                + " WHERE datname = current_database()").toString();
    }

    private TransactionTemplate repeatableRead() {
        TransactionTemplate rr = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
        rr.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        return rr;
    }

    @Test
    void theCallersLockTimeoutIsPutBackAfterAClaim() {
        String after = tx.execute(s -> {
            jdbc.execute("SET LOCAL lock_timeout = '7s'");
            store.claim(request(uniqueKey("K-setting"), Duration.ofMillis(250)));
            store.claim(request(uniqueKey("K-setting"), Duration.ofMillis(250)));
            return jdbc.queryForObject("SHOW lock_timeout", String.class);
        });
        assertThat(after).isEqualTo("7s");
    }

    /**
     * The claim's batch sets its own lock_timeout inside a savepoint; when its insert times out the server skips the
     * rest of the batch (the restore among it), and ROLLBACK TO SAVEPOINT must undo the setting as well.
     */
    @Test
    void afterALockTimeoutTheCallersLockTimeoutIsBackAndItsTransactionGoesOn() throws Exception {
        String key = uniqueKey("K-timeout-setting");
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<Void> owner = CompletableFuture.runAsync(() -> tx.executeWithoutResult(s -> {
            assertThat(store.claim(request(key, Duration.ofSeconds(5))).kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);
            held.countDown();
            try {
                assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            s.setRollbackOnly();
        }));
        try {
            assertThat(held.await(20, TimeUnit.SECONDS)).isTrue();
            String after = tx.execute(s -> {
                jdbc.execute("SET LOCAL lock_timeout = '7s'");
                insertBusinessRow("before");
                assertThat(store.claim(request(key, Duration.ofMillis(200))).kind())
                        .isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);
                insertBusinessRow("after");
                return jdbc.queryForObject("SHOW lock_timeout", String.class);
            });
            assertThat(after).isEqualTo("7s");
        } finally {
            release.countDown();
        }
        owner.get(30, TimeUnit.SECONDS);
        assertThat(businessRows()).isEqualTo(2);
        // the owner rolled back: the key is free, and the caller's session is back to its own setting
        assertThat(store.claim(request(key, Duration.ofSeconds(1))).kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);
    }

    @Test
    void underRepeatableReadAKeyCommittedAfterTheSnapshotAsksForANewTransactionWhichReplays() {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(5));
        AtomicInteger runs = new AtomicInteger();
        String outcome = repeatableRead().execute(s -> {
            // the snapshot is taken by the first statement
            assertThat(businessRows()).isZero();
            // another transaction records the key after that snapshot
            CompletableFuture.supplyAsync(() -> executor.execute(op, "K-rr", new Object[0],
                    () -> "first-" + runs.incrementAndGet())).join();
            assertThatThrownBy(() -> store.claim(request("K-rr", Duration.ofSeconds(5))))
                    .isInstanceOf(CallerTransactionAbortedException.class)
                    .isInstanceOf(CallerTransactionAborted.class)
                    .isInstanceOf(PessimisticLockingFailureException.class)
                    .hasMessageContaining("K-rr").hasMessageContaining("Orders.create")
                    .hasMessageContaining("retry the whole transaction")
                    .hasRootCauseInstanceOf(java.sql.SQLException.class);
            // the store's savepoint kept the transaction usable at the database: nothing is left aborted
            insertBusinessRow("still-usable");
            return "committed";
        });
        assertThat(outcome).isEqualTo("committed");
        assertThat(businessRows()).isEqualTo(1);

        // through the executor: the call fails with it (the executor passes it on and marks the transaction
        // rollback-only)
        List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
        IdempotentExecutor watched = IdempotentExecutor.builder(store)
                .transactions(new SpringTransactionBridge()).listener(events::add).build();
        Throwable failure = repeatableRead().execute(s -> {
            s.setRollbackOnly();
            assertThat(businessRows()).isEqualTo(1);
            CompletableFuture.supplyAsync(() -> executor.execute(op, "K-rr-2", new Object[0],
                    () -> "first-" + runs.incrementAndGet())).join();
            return catchThrowable(() -> watched.execute(op, "K-rr-2", new Object[0], () -> "second"));
        });
        // passed on unwrapped: @Retryable on TransientDataAccessException retries the whole transaction
        assertThat(failure).isInstanceOf(CallerTransactionAbortedException.class)
                .isInstanceOf(org.springframework.dao.TransientDataAccessException.class)
                .hasMessageContaining("K-rr-2").hasMessageContaining("retry the whole transaction");
        assertThat(events).extracting(IdempotencyEvent::outcome).doesNotContain(Outcome.EXECUTED);

        String retried = repeatableRead().execute(s -> executor.execute(op, "K-rr", new Object[0], () -> "retry"));
        assertThat(retried).isEqualTo("first-1");
        String retried2 = repeatableRead().execute(s -> executor.execute(op, "K-rr-2", new Object[0], () -> "retry"));
        assertThat(retried2).isEqualTo("first-2");
        assertThat(runs).hasValue(2);
    }

    @Test
    void underRepeatableReadADuplicateBlockedOnTheFirstTransactionAsksForANewTransaction() throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        FirstCall first = new FirstCall(op, "K-rr-wait", false, runs);
        assertThat(first.running.await(20, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() -> repeatableRead().execute(s ->
                executor.execute(op, "K-rr-wait", new Object[0], () -> "second")));
        awaitWaitingForLock(duplicate);
        first.release.countDown();
        assertThat(first.result.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(duplicate).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().havingCause()
                .isInstanceOf(CallerTransactionAbortedException.class)
                .withMessageContaining("K-rr-wait").withMessageContaining("retry the whole transaction");
        String retried = repeatableRead().execute(s ->
                executor.execute(op, "K-rr-wait", new Object[0], () -> "retry"));
        assertThat(retried).isEqualTo("first");
        assertThat(runs).hasValue(1);
    }

    @Test
    void instantsAreStoredAsInstantsWhateverTheSessionTimeZone() {
        ClaimRequest r = request(uniqueKey("K-tz"), Duration.ofSeconds(5));
        tx.executeWithoutResult(s -> {
            jdbc.execute("SET LOCAL TIME ZONE 'Asia/Tokyo'");
            store.claim(r);
            assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        });
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        String stored = jdbc.queryForObject("SELECT to_char(created_at AT TIME ZONE 'UTC', "
                + "'YYYY-MM-DD\"T\"HH24:MI:SS.MS') FROM " + table, String.class);
        // with the milliseconds always written: Instant.toString drops a fraction of .000 (one call in a thousand)
        assertThat(stored).isEqualTo(java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
                .withZone(java.time.ZoneOffset.UTC).format(r.now()));
    }

    /**
     * Instants are bound as {@code java.sql.Timestamp}s, which pgjdbc writes in the JVM's default time zone with its
     * offset: exact in any zone, the hour that a daylight-saving change repeats included.
     */
    @Test
    void instantsAreExactWhateverTheJvmTimeZoneEvenInARepeatedHour() {
        java.util.TimeZone jvm = java.util.TimeZone.getDefault();
        // 01:30 happens twice in New York on 2026-11-01: this is the second one (EST, after the clocks went back)
        java.time.Instant repeated = java.time.Instant.parse("2026-11-01T06:30:00.123Z");
        String key = uniqueKey("K-jvm-tz");
        // created in the first 01:30 (EDT), leased until the second (EST)
        ClaimRequest r = new ClaimRequest(dev.idempotency.internal.Keys.hash("Orders.create", "", key),
                "Orders.create", key, dev.idempotency.internal.Keys.sha256().digest(new byte[] {1}),
                dev.idempotency.Tier.REVERSIBLE, repeated.minusSeconds(3600).plusMillis(7), repeated,
                repeated.plusSeconds(86_400), Duration.ofSeconds(5));
        try {
            java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("America/New_York"));
            assertThat(store.claim(r).kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);
            assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        } finally {
            java.util.TimeZone.setDefault(jvm);
        }
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        assertThat(jdbc.queryForObject("SELECT to_char(lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS') "
                + "FROM " + table, String.class)).isEqualTo("2026-11-01T06:30:00.123");
    }

    @Test
    void underRepeatableReadAKeyCommittedBeforeTheSnapshotReplaysAtOnce() {
        ClaimRequest done = request("K-rr-before", Duration.ofSeconds(5));
        store.claim(done);
        store.complete(done.keyHash(), done.leaseUntil(), new byte[] {3}, done.expiresAt());
        ClaimResult seen = repeatableRead().execute(s -> store.claim(request("K-rr-before", Duration.ofSeconds(5))));
        assertThat(seen.record().result()).containsExactly(3);
    }
}
