package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotentOperation;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
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

/** Transactions on MariaDB: the shared two-transaction cases, plus innodb_lock_wait_timeout and time zones. */
@EnabledIfEnvironmentVariable(named = RealDatabase.MARIADB_URL, matches = ".+")
class MariaDbTransactionIT extends AbstractTransactionBehaviourTest {

    @RegisterExtension
    static final RealDatabase database = RealDatabase.mariadb(8);

    @Override
    protected RealDatabase database() {
        return database;
    }

    @Override
    protected boolean isWaitingForLock(String table) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.INNODB_TRX"
                + " WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE CONCAT('%', ?, ' %')", Integer.class, table) > 0;
    }

    /** REPEATABLE READ: InnoDB's default, with its gap locks; the deadlock test of the issue. */
    @Override
    protected int isolationUnderLoad() {
        return TransactionDefinition.ISOLATION_REPEATABLE_READ;
    }

    @Override
    protected String lockDiagnostics() {
        return jdbc.queryForList("SELECT trx_state, trx_query FROM information_schema.INNODB_TRX")
                + " " + jdbc.queryForList("SELECT id, command, state, info FROM "
                + "information_schema.PROCESSLIST WHERE db = DATABASE()");
    }

    @Test
    void theSessionsLockWaitTimeoutIsPutBackAfterAClaim() {
        long after = tx.execute(s -> {
            jdbc.execute("SET SESSION innodb_lock_wait_timeout = 7");
            store.claim(request(uniqueKey("K-setting"), Duration.ofMillis(250)));
            store.claim(request(uniqueKey("K-setting"), Duration.ofMillis(250)));
            long value = jdbc.queryForObject("SELECT @@SESSION.innodb_lock_wait_timeout", Long.class);
            jdbc.execute("SET SESSION innodb_lock_wait_timeout = DEFAULT");
            return value;
        });
        assertThat(after).isEqualTo(7);
    }

    @Test
    void underRepeatableReadAKeyCommittedAfterTheSnapshotIsReadWithALockingReadAndReplays() {
        TransactionTemplate rr = new TransactionTemplate(new DataSourceTransactionManager(database().dataSource()));
        rr.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        IdempotentOperation<String> op = operation(Duration.ofSeconds(5));
        AtomicInteger runs = new AtomicInteger();
        String replayed = rr.execute(s -> {
            assertThat(businessRows()).isZero(); // takes the snapshot
            CompletableFuture.supplyAsync(() -> executor.execute(op, "K-rr", new Object[0],
                    () -> "first-" + runs.incrementAndGet())).join();
            String r = executor.execute(op, "K-rr", new Object[0], () -> "second-" + runs.incrementAndGet());
            insertBusinessRow("still-usable");
            return r;
        });
        assertThat(replayed).isEqualTo("first-1");
        assertThat(runs).hasValue(1);
        assertThat(businessRows()).isEqualTo(1);
    }

    /**
     * A lock wait timeout on a server with {@code innodb_rollback_on_timeout=ON} rolled back the caller's whole
     * transaction: the claim must not answer "lock timeout" (the caller would go on in a transaction that is gone)
     * but say the transaction must be retried. The server setting is read-only at run time, so this server's answer
     * to the store's one question about it is rewritten to ON; this server's own (OFF) keeps the answer a lock
     * timeout, as {@link #theDuplicateGivesUpAfterItsLockTimeoutAndItsTransactionGoesOn()} shows.
     */
    @Test
    void aLockTimeoutThatRolledBackTheWholeTransactionSaysTheTransactionMustBeRetried() throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        FirstCall first = new FirstCall(op, "K-rollback-on-timeout", false, runs);
        assertThat(first.running.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        AtomicInteger questions = new AtomicInteger();
        DataSource rollsBackOnTimeout = rollbackOnTimeoutOn(dataSource(), questions);
        JdbcIdempotencyStore onStore = JdbcIdempotencyStore.builder(rollsBackOnTimeout).tableName(table).build();
        TransactionTemplate onTx = new TransactionTemplate(new DataSourceTransactionManager(rollsBackOnTimeout));
        try {
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> onTx.executeWithoutResult(s ->
                        onStore.claim(request("K-rollback-on-timeout", Duration.ofSeconds(1)))))
                        .isInstanceOf(CallerTransactionAbortedException.class)
                        .isInstanceOf(CallerTransactionAborted.class)
                        .isInstanceOf(PessimisticLockingFailureException.class)
                        .hasMessageContaining("K-rollback-on-timeout").hasMessageContaining("Orders.create")
                        .hasMessageContaining("innodb_rollback_on_timeout")
                        .hasMessageContaining("retry the whole transaction");
            }
            // once per store
            assertThat(questions).hasValue(1);
            // without a transaction nothing of the caller's is lost: a lock timeout stays an answer
            assertThat(onStore.claim(request("K-rollback-on-timeout", Duration.ofSeconds(1))).kind())
                    .isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);
        } finally {
            first.release.countDown();
        }
        assertThat(first.result.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("first");
    }

    /**
     * Under REPEATABLE READ, a claim committed in flight (by an owner without a transaction) after this transaction's
     * snapshot is invisible to the store's plain read, so the insert meets it and keeps its row lock until this
     * transaction ends: the claim gives up at once with IdempotencyInProgressException rather than let the executor
     * poll while holding the lock the owner needs; once the transaction ended, the owner records its result.
     */
    @Test
    void underRepeatableReadAClaimCommittedInFlightAfterTheSnapshotGivesUpAtOnce() {
        TransactionTemplate rr = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        rr.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
        ClaimRequest owner = request(uniqueKey("K-race"), Duration.ofSeconds(5));
        assertThatThrownBy(() -> rr.executeWithoutResult(s -> {
            assertThat(businessRows()).isZero(); // takes the snapshot
            CompletableFuture.runAsync(() -> assertThat(store.claim(owner).isAcquired()).isTrue()).join();
            store.claim(request(owner.key(), Duration.ofSeconds(5)));
        })).isInstanceOf(dev.idempotency.IdempotencyInProgressException.class).hasMessageContaining(owner.key())
                .hasMessageContaining("retry");
        assertThat(CompletableFuture.supplyAsync(() -> store.complete(owner.keyHash(), owner.leaseUntil(),
                new byte[] {1}, owner.expiresAt())).orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join())
                .isTrue();
    }

    /** {@code dataSource} whose server answers ON when asked for innodb_rollback_on_timeout. */
    private static DataSource rollbackOnTimeoutOn(DataSource dataSource, AtomicInteger questions) {
        return new org.springframework.jdbc.datasource.DelegatingDataSource(dataSource) {
            @Override
            public java.sql.Connection getConnection() throws java.sql.SQLException {
                java.sql.Connection real = super.getConnection();
                return (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(
                        getClass().getClassLoader(), new Class<?>[] {java.sql.Connection.class}, (proxy, m, args) -> {
                            if (m.getName().equals("prepareStatement") && args.length == 1
                                    && ((String) args[0]).contains("innodb_rollback_on_timeout")) {
                                questions.incrementAndGet();
                                args = new Object[] {"SELECT 1"};
                            }
                            try {
                                return m.invoke(real, args);
                            } catch (java.lang.reflect.InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
    }

    @Test
    void instantsAreStoredAsUtcWhateverTheSessionTimeZone() {
        ClaimRequest r = request(uniqueKey("K-tz"), Duration.ofSeconds(5));
        tx.executeWithoutResult(s -> {
            jdbc.execute("SET time_zone = '+05:00'");
            store.claim(r);
            jdbc.execute("SET time_zone = DEFAULT");
        });
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
        String stored = jdbc.queryForObject("SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%f') FROM " + table,
                String.class);
        // with the milliseconds always written: Instant.toString drops a fraction of .000 (one call in a thousand)
        assertThat(stored).startsWith(java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS")
                .withZone(java.time.ZoneOffset.UTC).format(r.now()));
    }
}
