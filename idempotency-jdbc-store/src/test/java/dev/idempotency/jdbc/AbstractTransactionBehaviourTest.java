package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.dao.PessimisticLockingFailureException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Two real transactions on one key (docs/stores.md, "Concurrent duplicates and lock timeouts"), on a real
 * database: the duplicate blocks on the uncommitted claim, then replays, or acquires after a rollback, or gives up
 * after its lock timeout; and the caller's transaction stays usable after a conflicting claim.
 */
abstract class AbstractTransactionBehaviourTest {

    protected String table;
    protected JdbcTemplate jdbc;
    protected TransactionTemplate tx;
    protected JdbcIdempotencyStore store;
    protected IdempotentExecutor executor;

    /** The database. */
    /** The database this suite runs on, registered by the subclass as a static extension. */
    protected abstract RealDatabase database();

    protected final DataSource dataSource() {
        return database().dataSource();
    }

    protected final JdbcDialect dialect() {
        return database().dialect();
    }

    /** Whether a session is waiting for a row lock in a statement on {@code table}. */
    protected abstract boolean isWaitingForLock(String table);

    /** What the database says of its sessions, for a failure message. */
    protected abstract String lockDiagnostics();

    @BeforeEach
    void createTables() {
        table = TestSchema.uniqueTableName();
        database().createTable(table);
        jdbc = new JdbcTemplate(dataSource());
        jdbc.execute("CREATE TABLE " + table + "_biz (id VARCHAR(64) PRIMARY KEY)");
        tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        store = JdbcIdempotencyStore.builder(dataSource()).tableName(table).build();
        executor = IdempotentExecutor.builder(store).transactions(bridge()).build();
    }

    /** The executor's view of the transactions, whose {@code outside} suspends the caller's. */
    protected SpringTransactionBridge bridge() {
        return new SpringTransactionBridge(new DataSourceTransactionManager(dataSource()));
    }

    /**
     * Work outside the caller's transaction runs on a connection of its own: it commits at once, and reads the latest
     * committed rows whatever the caller's snapshot.
     */
    @Test
    void theBridgesOutsideRunsOnAConnectionOfItsOwn() {
        ClaimRequest r = request(uniqueKey("K-outside"), Duration.ofSeconds(5));
        at(TransactionDefinition.ISOLATION_REPEATABLE_READ).executeWithoutResult(s -> {
            assertThat(businessRows()).isZero(); // takes the snapshot
            assertThat(bridge().outside(() -> store.claim(r)).isTransactional()).isFalse();
            assertThat(bridge().outside(() -> store.find(r.keyHash()))).contains(r.toInFlightRecord());
            s.setRollbackOnly();
        });
        assertThat(store.find(r.keyHash())).contains(r.toInFlightRecord());
    }

    @AfterEach
    void dropTables() {
        TestSchema.drop(dataSource(), table + "_biz");
        TestSchema.drop(dataSource(), table);
    }

    protected static IdempotentOperation<String> operation(Duration lockTimeout) {
        return IdempotentOperation.builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class))
                .lockTimeout(lockTimeout).build();
    }

    protected ClaimRequest request(String key, Duration lockTimeout) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key,
                Keys.sha256().digest(new byte[] {1}), Tier.REVERSIBLE, now, now.plusSeconds(30), now.plusSeconds(3600),
                lockTimeout);
    }

    protected void insertBusinessRow(String id) {
        jdbc.update("INSERT INTO " + table + "_biz (id) VALUES (?)", id);
    }

    protected int businessRows() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + "_biz", Integer.class);
    }

    /** Waits until {@code duplicate} blocks on a row lock of the table (it must not end before). */
    protected void awaitWaitingForLock(CompletableFuture<?> duplicate) {
        // polling the database's lock view, for want of an event; no faster than every 100 ms, because InnoDB
        // refreshes INFORMATION_SCHEMA.INNODB_TRX only when it was not read in the last 100 ms
        try {
            Awaitility.await("a session waiting for a lock on " + table)
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(200))
                    .failFast(duplicate::isDone)
                    .until(() -> isWaitingForLock(table));
        } catch (TerminalFailureException e) {
            throw new AssertionError("the duplicate ended instead of waiting for the first transaction: "
                    + duplicate.handle((r, x) -> x != null ? x : r).join(), e);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no session waits for a lock on " + table + "; sessions: " + lockDiagnostics(),
                    e);
        }
    }

    /** Holds the first call of {@code key} inside its transaction until released; then commits or rolls back. */
    protected final class FirstCall {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CompletableFuture<String> result;

        FirstCall(IdempotentOperation<String> op, String key, boolean rollback, AtomicInteger runs) {
            result = CompletableFuture.supplyAsync(() -> tx.execute(status -> {
                String r = executor.execute(op, key, new Object[0], () -> {
                    insertBusinessRow("first-" + runs.incrementAndGet());
                    running.countDown();
                    await(release);
                    return "first";
                });
                if (rollback) {
                    status.setRollbackOnly();
                }
                return r;
            }));
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theCallersTransactionStaysUsableAfterAConflictingClaim() {
        ClaimRequest first = request("K-usable", Duration.ofSeconds(5));
        store.claim(first);
        store.complete(first.keyHash(), first.leaseUntil(), new byte[] {1}, first.expiresAt());
        tx.executeWithoutResult(s -> {
            insertBusinessRow("before");
            ClaimResult conflict = store.claim(request("K-usable", Duration.ofSeconds(5)));
            assertThat(conflict.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
            assertThat(conflict.record().status()).isEqualTo(Status.COMPLETED);
            insertBusinessRow("after");
        });
        assertThat(businessRows()).isEqualTo(2);
    }

    @Test
    void aClaimMadeInTheHoldersOwnMillisecondIsAnsweredWithTheHolder() {
        // a claim identical to its holder's, to the millisecond (a retry or a second caller at once, or the same key
        // twice in one transaction): the holder is found, never taken for a vanished row, never acquired again
        ClaimRequest first = request("K-same-milli", Duration.ofSeconds(5));
        ClaimRequest twin = first; // another caller's claim of the same key, in the same millisecond
        assertThat(store.claim(first).kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);

        ClaimResult alone = store.claim(twin);
        assertThat(alone.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(alone.record().status()).isEqualTo(Status.IN_FLIGHT);
        assertThat(alone.record().leaseUntil()).isEqualTo(first.leaseUntil());

        store.complete(first.keyHash(), first.leaseUntil(), new byte[] {7}, first.expiresAt());
        tx.executeWithoutResult(s -> {
            ClaimResult inTransaction = store.claim(twin);
            assertThat(inTransaction.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
            assertThat(inTransaction.record().status()).isEqualTo(Status.COMPLETED);
            assertThat(inTransaction.record().result()).containsExactly(7);
        });

        // the same key twice in one transaction, in one millisecond: the second meets the first's row
        ClaimRequest other = request("K-same-milli-2", Duration.ofSeconds(5));
        tx.executeWithoutResult(s -> {
            assertThat(store.claim(other).kind()).isEqualTo(ClaimResult.Kind.ACQUIRED);
            ClaimResult again = store.claim(other);
            assertThat(again.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
            assertThat(again.record().leaseUntil()).isEqualTo(other.leaseUntil());
            insertBusinessRow("same-milli");
        });
        assertThat(businessRows()).isEqualTo(1);
        assertThat(store.find(other.keyHash())).hasValueSatisfying(r -> assertThat(r.status())
                .isEqualTo(Status.IN_FLIGHT));
    }

    @Test
    void theDuplicateWaitsForTheFirstTransactionThenReplaysIt() throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        FirstCall first = new FirstCall(op, "K-replay", false, runs);
        assertThat(first.running.await(20, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() -> tx.execute(s ->
                executor.execute(op, "K-replay", new Object[0], () -> "second-" + runs.incrementAndGet())));
        awaitWaitingForLock(duplicate);
        assertThat(duplicate).isNotDone();
        first.release.countDown();
        assertThat(first.result.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(duplicate.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(runs).hasValue(1);
        assertThat(businessRows()).isEqualTo(1);
    }

    @Test
    void theDuplicateAcquiresTheKeyWhenTheFirstTransactionRollsBack() throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        FirstCall first = new FirstCall(op, "K-rollback", true, runs);
        assertThat(first.running.await(20, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() -> tx.execute(s ->
                executor.execute(op, "K-rollback", new Object[0], () -> {
                    insertBusinessRow("second-" + runs.incrementAndGet());
                    return "second";
                })));
        awaitWaitingForLock(duplicate);
        first.release.countDown();
        assertThat(first.result.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(duplicate.get(30, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(runs).hasValue(2);
        assertThat(jdbc.queryForList("SELECT id FROM " + table + "_biz", String.class)).containsExactly("second-2");
        assertThat(executor.execute(op, "K-rollback", new Object[0], () -> "third")).isEqualTo("second");
    }

    @Test
    void theDuplicateGivesUpAfterItsLockTimeoutAndItsTransactionGoesOn() throws Exception {
        IdempotentOperation<String> slow = operation(Duration.ofSeconds(30));
        AtomicInteger runs = new AtomicInteger();
        FirstCall first = new FirstCall(slow, "K-timeout", false, runs);
        assertThat(first.running.await(20, TimeUnit.SECONDS)).isTrue();
        try {
            IdempotentOperation<String> impatient = operation(Duration.ofSeconds(1));
            long start = System.nanoTime();
            assertThatThrownBy(() -> tx.executeWithoutResult(s -> executor.execute(impatient, "K-timeout",
                    new Object[0], () -> "never")))
                    .isInstanceOf(IdempotencyInProgressException.class).hasMessageContaining("K-timeout");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(900),
                    Duration.ofSeconds(5));

            // at the store: the lock timeout is an answer, and the caller's transaction can still commit its work
            tx.executeWithoutResult(s -> {
                insertBusinessRow("before-timeout");
                assertThat(store.claim(request("K-timeout", Duration.ofMillis(500))).kind())
                        .isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);
                insertBusinessRow("after-timeout");
            });
            // and without a transaction
            assertThat(store.claim(request("K-timeout", Duration.ofMillis(500))).kind())
                    .isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);
        } finally {
            first.release.countDown();
        }
        assertThat(first.result.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(jdbc.queryForList("SELECT id FROM " + table + "_biz ORDER BY id", String.class))
                .containsExactly("after-timeout", "before-timeout", "first-1");
        assertThat(executor.execute(slow, "K-timeout", new Object[0], () -> "again")).isEqualTo("first");
    }

    @Test
    void withoutATransactionTheClaimCommitsInFlightAndTheDuplicatePollsUntilTheResult() throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(30));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() ->
                executor.execute(op, "K-plain", new Object[0], () -> {
                    running.countDown();
                    await(release);
                    return "first";
                }));
        assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
        byte[] hash = Keys.hash("Orders.create", "", "K-plain");
        assertThat(store.find(hash).orElseThrow().status()).isEqualTo(Status.IN_FLIGHT);
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() ->
                executor.execute(op, "K-plain", new Object[0], () -> "second"));
        assertThat(isWaitingForLock(table)).isFalse();
        release.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(duplicate.get(30, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(store.find(hash).orElseThrow().status()).isEqualTo(Status.COMPLETED);
    }

    private TransactionTemplate at(int isolation) {
        TransactionTemplate t = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        t.setIsolationLevel(isolation);
        return t;
    }

    /**
     * The owner runs without a transaction (its claim committed in flight at once); a duplicate runs inside one and
     * polls. The duplicate must hold no lock that the owner needs to record its result (issue 10, item 7): the owner
     * completes while the duplicate's transaction is open, and the duplicate replays it.
     */
    @ParameterizedTest
    @ValueSource(ints = {TransactionDefinition.ISOLATION_READ_COMMITTED,
            TransactionDefinition.ISOLATION_REPEATABLE_READ})
    void aDuplicateInsideATransactionReplaysAnOwnerThatRunsWithoutOne(int isolation) throws Exception {
        IdempotentOperation<String> op = operation(Duration.ofSeconds(10));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch polling = new CountDownLatch(1);
        IdempotentExecutor duplicates = IdempotentExecutor.builder(new ForwardingStore(store) {
            @Override
            public Optional<IdempotencyRecord> find(byte[] keyHash) {
                polling.countDown();
                return super.find(keyHash);
            }
        }).transactions(bridge()).build();
        CompletableFuture<String> owner = CompletableFuture.supplyAsync(() ->
                executor.execute(op, "K-owner-plain", new Object[0], () -> {
                    running.countDown();
                    await(release);
                    return "owner";
                }));
        assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
        // the executor's polling reads run outside the duplicate's transaction: under REPEATABLE READ they still see
        // the owner's outcome rather than the duplicate's snapshot
        CompletableFuture<String> duplicate = CompletableFuture.supplyAsync(() ->
                at(isolation).execute(s ->
                        duplicates.execute(op, "K-owner-plain", new Object[0], () -> "duplicate")));
        try {
            assertThat(polling.await(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            release.countDown();
        }
        assertThat(owner.get(30, TimeUnit.SECONDS)).isEqualTo("owner");
        assertThat(duplicate.get(30, TimeUnit.SECONDS)).isEqualTo("owner");
    }

    /**
     * The store's side of {@link #aDuplicateInsideATransactionReplaysAnOwnerThatRunsWithoutOne()} at both isolation
     * levels: a claim, a takeover and a stale mark refused because the lease is live by the database's clock (a node
     * whose clock runs ahead), all inside the duplicate's open transaction, leave the owner free to complete at once;
     * a read outside that transaction (where the executor polls) shows the outcome.
     */
    @ParameterizedTest
    @ValueSource(ints = {TransactionDefinition.ISOLATION_READ_COMMITTED,
            TransactionDefinition.ISOLATION_REPEATABLE_READ})
    void aDuplicateInsideATransactionHoldsNoLockOnTheOwnersCommittedClaim(int isolation) throws Exception {
        ClaimRequest owner = request(uniqueKey("K-owner"), Duration.ofSeconds(5));
        assertThat(store.claim(owner).isAcquired()).isTrue();
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<java.util.List<ClaimResult>> duplicate = CompletableFuture.supplyAsync(() ->
                at(isolation).execute(s -> {
                    ClaimResult seen = store.claim(request(owner.key(), Duration.ofSeconds(5)));
                    ClaimResult refused = store.takeOver(request(owner.key(), Duration.ofSeconds(5)),
                            seen.record());
                    assertThat(store.markNeedsReviewIfStale(owner.keyHash(), owner.leaseUntil(),
                            owner.leaseUntil().plus(Duration.ofHours(1)))).isFalse();
                    waiting.countDown();
                    await(done);
                    return java.util.List.of(seen, refused);
                }));
        try {
            assertThat(waiting.await(20, TimeUnit.SECONDS)).as("the duplicate's claim returned").isTrue();
            CompletableFuture<Boolean> completed = CompletableFuture.supplyAsync(() ->
                    store.complete(owner.keyHash(), owner.leaseUntil(), new byte[] {7}, owner.expiresAt()));
            assertThat(completed.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(store.find(owner.keyHash()).orElseThrow().result()).containsExactly(7);
        } finally {
            done.countDown();
        }
        java.util.List<ClaimResult> seen = duplicate.get(30, TimeUnit.SECONDS);
        assertThat(seen.get(0).kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(seen.get(0).record()).isEqualTo(owner.toInFlightRecord());
        assertThat(seen.get(1).kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(seen.get(1).record()).isEqualTo(owner.toInFlightRecord());
    }

    /**
     * The executor's polling reads run outside the caller's transaction, and must see the latest committed row: a
     * {@code find} without a transaction does, even on a pooled connection that does not auto-commit and runs under
     * REPEATABLE READ (where a read left open would keep showing its first snapshot).
     */
    @Test
    void findWithoutATransactionReadsTheLatestCommittedRowOnAConnectionThatDoesNotAutoCommit() throws Exception {
        ClaimRequest owner = request(uniqueKey("K-latest"), Duration.ofSeconds(5));
        try (java.sql.Connection con = dataSource().getConnection()) {
            con.setAutoCommit(false);
            con.setTransactionIsolation(java.sql.Connection.TRANSACTION_REPEATABLE_READ);
            try {
                JdbcIdempotencyStore onOne = JdbcIdempotencyStore.builder(
                        new org.springframework.jdbc.datasource.SingleConnectionDataSource(con, true))
                        .tableName(table).build();
                assertThat(onOne.find(owner.keyHash())).isEmpty();
                assertThat(store.claim(owner).isAcquired()).isTrue();
                assertThat(onOne.find(owner.keyHash())).contains(owner.toInFlightRecord());
                assertThat(store.complete(owner.keyHash(), owner.leaseUntil(), new byte[] {5}, owner.expiresAt()))
                        .isTrue();
                assertThat(onOne.find(owner.keyHash()).orElseThrow().result()).containsExactly(5);
            } finally {
                con.rollback();
                con.setAutoCommit(true);
            }
        }
    }

    /** The isolation level of {@link #manyTransactionsClaimingSeveralKeysEachInRandomOrder()}. */
    protected abstract int isolationUnderLoad();

    /**
     * 16 threads, 100 transactions each, 3 claims per transaction in random order over 300 keys: lock waits, gap locks
     * and replays inside open transactions. Whatever the database does (a deadlock victim, a snapshot conflict), the
     * caller sees at worst a {@link CallerTransactionAborted} {@link PessimisticLockingFailureException}, never
     * another error, and each key is acquired by exactly one committed transaction.
     */
    @Test
    void manyTransactionsClaimingSeveralKeysEachInRandomOrder() throws Exception {
        TransactionTemplate loaded = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        loaded.setIsolationLevel(isolationUnderLoad());
        java.util.Map<String, AtomicInteger> committedAcquisitions = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicInteger aborted = new AtomicInteger();
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(16);
        try {
            java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
            for (int t = 0; t < 16; t++) {
                java.util.Random random = new java.util.Random(t);
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        java.util.List<String> acquired = new java.util.ArrayList<>();
                        try {
                            loaded.executeWithoutResult(s -> {
                                for (int k = 0; k < 3; k++) {
                                    ClaimRequest r = request("L-" + random.nextInt(300), Duration.ofSeconds(20));
                                    if (store.claim(r).isAcquired()) {
                                        assertThat(store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1},
                                                r.expiresAt())).isTrue();
                                        acquired.add(r.key());
                                    }
                                }
                            });
                            acquired.forEach(key -> committedAcquisitions
                                    .computeIfAbsent(key, x -> new AtomicInteger()).incrementAndGet());
                        } catch (PessimisticLockingFailureException e) {
                            assertThat(e).isInstanceOf(CallerTransactionAborted.class)
                                    .hasMessageContaining("retry the whole transaction");
                            aborted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(committedAcquisitions).allSatisfy((key, n) -> assertThat(n).as(key).hasValue(1));
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
                .isEqualTo(committedAcquisitions.size());
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE status <> 'COMPLETED'",
                Integer.class)).isZero();
        System.out.println(getClass().getSimpleName() + ": 1600 transactions x 3 claims, " + aborted
                + " aborted by the database (CallerTransactionAborted)");
    }

    /**
     * Two transactions claim two keys in opposite orders: the database picks a deadlock victim, whose claim throws
     * {@link CallerTransactionAborted} (a {@link PessimisticLockingFailureException}, so a retry of the whole
     * transaction is what Spring users do), never {@link IdempotencyInProgressException} (after which a caller would
     * go on in a transaction that is gone); the other transaction acquires both keys.
     */
    @Test
    void aDeadlockVictimsClaimSaysTheWholeTransactionMustBeRetried() throws Exception {
        String a = uniqueKey("K-dead-a");
        String b = uniqueKey("K-dead-b");
        CountDownLatch firstClaims = new CountDownLatch(2);
        CompletableFuture<Object> one = CompletableFuture.supplyAsync(() -> crossClaims(a, b, firstClaims, false));
        CompletableFuture<Object> two = CompletableFuture.supplyAsync(() -> crossClaims(b, a, firstClaims, true));
        Object r1 = one.get(60, TimeUnit.SECONDS);
        Object r2 = two.get(60, TimeUnit.SECONDS);
        assertThat(java.util.List.of(r1, r2)).filteredOn(r -> r instanceof Throwable).singleElement()
                .satisfies(e -> assertThat((Throwable) e).isInstanceOf(PessimisticLockingFailureException.class)
                        .isInstanceOf(CallerTransactionAborted.class)
                        .hasMessageContaining("K-dead-").hasMessageContaining("retry the whole transaction"));
        assertThat(java.util.List.of(r1, r2)).filteredOn(r -> r instanceof String).containsExactly("acquired both");
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class)).isEqualTo(2);
    }

    /**
     * The same for any store method: two committed claims; two transactions each renew one (locking its row) and then
     * record a result on the other's, in opposite orders. The victim's {@code complete} says the whole transaction
     * must be retried; the other transaction's goes through.
     */
    @Test
    void aDeadlockVictimsCompleteSaysTheWholeTransactionMustBeRetried() throws Exception {
        ClaimRequest a = request(uniqueKey("K-dead-complete-a"), Duration.ofSeconds(20));
        ClaimRequest b = request(uniqueKey("K-dead-complete-b"), Duration.ofSeconds(20));
        assertThat(store.claim(a).isAcquired()).isTrue();
        assertThat(store.claim(b).isAcquired()).isTrue();
        CountDownLatch claimed = new CountDownLatch(2);
        CompletableFuture<Object> one = CompletableFuture.supplyAsync(() -> crossCompletes(a, b, claimed, false));
        CompletableFuture<Object> two = CompletableFuture.supplyAsync(() -> crossCompletes(b, a, claimed, true));
        java.util.List<Object> results = java.util.List.of(one.get(60, TimeUnit.SECONDS),
                two.get(60, TimeUnit.SECONDS));
        assertThat(results).filteredOn(r -> r instanceof Throwable).singleElement()
                .satisfies(e -> assertThat((Throwable) e).isInstanceOf(PessimisticLockingFailureException.class)
                        .isInstanceOf(CallerTransactionAborted.class)
                        .hasMessageContaining("JdbcIdempotencyStore.complete")
                        .hasMessageContaining("retry the whole transaction"));
        assertThat(results).filteredOn(r -> r instanceof Boolean).containsExactly(true);
    }

    /** Renews {@code own}, waits for the other transaction's renewal, then completes {@code other}. */
    private Object crossCompletes(ClaimRequest own, ClaimRequest other, CountDownLatch claimed, boolean waitForOther) {
        try {
            return tx.execute(s -> {
                assertThat(store.renew(own.keyHash(), own.leaseUntil(), own.leaseUntil().plusSeconds(1))).isTrue();
                claimed.countDown();
                await(claimed);
                if (waitForOther) {
                    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                            .until(() -> isWaitingForLock(table));
                }
                return store.complete(other.keyHash(), other.leaseUntil(), new byte[] {1}, other.expiresAt());
            });
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Claims {@code first}, waits for the other transaction's first claim, then claims {@code second}. */
    private Object crossClaims(String first, String second, CountDownLatch firstClaims, boolean waitForOther) {
        try {
            return tx.execute(s -> {
                assertThat(store.claim(request(first, Duration.ofSeconds(20))).isAcquired()).isTrue();
                firstClaims.countDown();
                await(firstClaims);
                if (waitForOther) {
                    // the other transaction blocks on our first row before we block on its: a deadlock, not a race
                    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                            .until(() -> isWaitingForLock(table));
                }
                ClaimResult again = store.claim(request(second, Duration.ofSeconds(20)));
                assertThat(again.isAcquired()).isTrue();
                return "acquired both";
            });
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** A unique key per call, for tests that run several scenarios. */
    protected static String uniqueKey(String name) {
        return name + "-" + UUID.randomUUID();
    }
}
