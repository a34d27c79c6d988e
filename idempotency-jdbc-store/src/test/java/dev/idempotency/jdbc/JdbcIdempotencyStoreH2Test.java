package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** The JDBC store on H2: the SQL of each method, transaction joining, and the lock wait on an uncommitted claim. */
class JdbcIdempotencyStoreH2Test {

    private static final Instant T0 = Instant.parse("2026-01-02T03:04:05.678Z");

    private JdbcDataSource dataSource;
    private String table;
    private JdbcIdempotencyStore store;
    private TransactionTemplate tx;

    @BeforeEach
    void setUp() {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        table = TestSchema.uniqueTableName();
        TestSchema.create(dataSource, JdbcDialect.h2(), table);
        store = JdbcIdempotencyStore.builder(dataSource).tableName(table).build();
        tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    @AfterEach
    void tearDown() {
        new JdbcTemplate(dataSource).execute("SHUTDOWN");
    }

    private static ClaimRequest request(String key, Instant now) {
        return request(key, "args", now, Duration.ofSeconds(10));
    }

    private static ClaimRequest request(String key, String args, Instant now, Duration lockTimeout) {
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key,
                Keys.sha256().digest(args.getBytes(StandardCharsets.UTF_8)), Tier.REVERSIBLE, now,
                now.plusSeconds(30), now.plus(Duration.ofHours(24)), lockTimeout);
    }

    @Test
    void detectsTheDialectFromMetadataAndAnExplicitOneWins() {
        assertThat(store.dialect()).isSameAs(JdbcDialect.h2());
        JdbcIdempotencyStore explicit = JdbcIdempotencyStore.builder(dataSource).tableName(table)
                .dialect(JdbcDialect.postgresql()).build();
        assertThat(explicit.dialect()).isSameAs(JdbcDialect.postgresql());
        assertThat(JdbcDialect.of(dataSource)).isSameAs(JdbcDialect.h2());
        assertThat(JdbcDialect.forProductName("MariaDB")).isSameAs(JdbcDialect.mariadb());
        assertThat(JdbcDialect.forProductName("MySQL")).isSameAs(JdbcDialect.mysql());
        assertThat(JdbcDialect.forProductName("PostgreSQL")).isSameAs(JdbcDialect.postgresql());
        assertThatThrownBy(() -> JdbcDialect.forProductName("Oracle"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'Oracle'");
    }

    @Test
    void refusesATableNameThatIsNotAPlainIdentifier() {
        for (String bad : new String[] {"", "1abc", "a-b", "t; DROP TABLE x", "a.b.c", "\"quoted\"", "a b"}) {
            assertThatThrownBy(() -> JdbcIdempotencyStore.builder(dataSource).tableName(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("tableName").hasMessageContaining("'" + bad + "'");
        }
        assertThat(JdbcIdempotencyStore.builder(dataSource).tableName("app.idem_1").build().tableName())
                .isEqualTo("app.idem_1");
        assertThat(JdbcIdempotencyStore.builder(dataSource).build().tableName()).isEqualTo("idempotency_record");
    }

    @Test
    void claimCommitsOnItsOwnWithoutATransactionAndADuplicateSeesTheRecord() {
        ClaimRequest first = request("K-1", T0);
        assertThat(store.claim(first)).satisfies(r -> {
            assertThat(r.isAcquired()).isTrue();
            assertThat(r.isTransactional()).isFalse();
        });
        ClaimResult duplicate = store.claim(request("K-1", T0.plusMillis(1)));
        assertThat(duplicate.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(duplicate.record()).isEqualTo(first.toInFlightRecord());
        assertThat(store.find(first.keyHash())).contains(first.toInFlightRecord());
    }

    @Test
    void claimJoinsTheCallersTransactionAndVanishesWithItsRollback() {
        ClaimRequest r = request("K-tx", T0);
        ClaimResult inTx = tx.execute(status -> {
            ClaimResult result = store.claim(r);
            assertThat(store.find(r.keyHash())).isPresent();
            status.setRollbackOnly();
            return result;
        });
        assertThat(inTx.isAcquired()).isTrue();
        assertThat(inTx.isTransactional()).isTrue();
        assertThat(store.find(r.keyHash())).isEmpty();
        assertThat(store.claim(r).isAcquired()).isTrue();
    }

    @Test
    void completeReleaseAndMarkNeedsReviewAreConditionalOnTheClaimsLease() {
        ClaimRequest r = request("K-2", T0);
        store.claim(r);
        byte[] result = "{\"id\":1}".getBytes(StandardCharsets.UTF_8);
        Instant expires = T0.plus(Duration.ofHours(1));
        assertThat(store.complete(r.keyHash(), r.leaseUntil().plusMillis(1), result, expires)).isFalse();
        assertThat(store.release(r.keyHash(), r.leaseUntil().minusMillis(1))).isFalse();
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil().plusMillis(1))).isFalse();
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), result, expires)).isTrue();
        IdempotencyRecord done = store.find(r.keyHash()).orElseThrow();
        assertThat(done).isEqualTo(r.toInFlightRecord().with(Status.COMPLETED, result, null, expires));
        // no longer in flight: every lease-conditional method refuses
        assertThat(store.complete(r.keyHash(), r.leaseUntil(), result, expires)).isFalse();
        assertThat(store.release(r.keyHash(), r.leaseUntil())).isFalse();
        assertThat(store.markNeedsReview(r.keyHash(), r.leaseUntil())).isFalse();

        ClaimRequest other = request("K-3", T0);
        store.claim(other);
        assertThat(store.markNeedsReview(other.keyHash(), other.leaseUntil())).isTrue();
        assertThat(store.find(other.keyHash()).orElseThrow().status()).isEqualTo(Status.NEEDS_REVIEW);
        assertThat(store.release(other.keyHash(), other.leaseUntil())).isFalse();

        ClaimRequest released = request("K-4", T0);
        store.claim(released);
        assertThat(store.release(released.keyHash(), released.leaseUntil())).isTrue();
        assertThat(store.find(released.keyHash())).isEmpty();
    }

    @Test
    void takeOverReplacesOnlyTheObservedStateAndExactlyOnce() {
        ClaimRequest stale = request("K-5", T0);
        store.claim(stale);
        IdempotencyRecord observed = store.find(stale.keyHash()).orElseThrow();
        Instant later = T0.plusSeconds(60);
        ClaimRequest a = request("K-5", later);
        ClaimRequest b = request("K-5", later.plusMillis(3));
        assertThat(store.takeOver(a, observed).isAcquired()).isTrue();
        ClaimResult lost = store.takeOver(b, observed);
        assertThat(lost.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(lost.record()).isEqualTo(a.toInFlightRecord());

        // an expired completed record (no lease) is taken over by its expiry
        store.complete(a.keyHash(), a.leaseUntil(), new byte[] {1}, later.plusSeconds(1));
        IdempotencyRecord expired = store.find(a.keyHash()).orElseThrow();
        ClaimRequest c = request("K-5", later.plusSeconds(5));
        assertThat(store.takeOver(c, expired).isAcquired()).isTrue();
        assertThat(store.find(c.keyHash())).contains(c.toInFlightRecord());

        // the observed record vanished meanwhile: the takeover claims the free key
        store.release(c.keyHash(), c.leaseUntil());
        assertThat(store.takeOver(request("K-5", later.plusSeconds(6)), expired).isAcquired()).isTrue();
    }

    @Test
    void resolveCompletesOrReleasesTheObservedRecordOnly() {
        ClaimRequest r = request("K-6", T0);
        store.claim(r);
        IdempotencyRecord inFlight = store.find(r.keyHash()).orElseThrow();
        store.markNeedsReview(r.keyHash(), r.leaseUntil());
        Instant expires = T0.plus(Duration.ofDays(1));
        assertThat(store.resolve(inFlight, new byte[] {7}, expires)).as("observed before the mark").isFalse();
        IdempotencyRecord review = store.find(r.keyHash()).orElseThrow();
        assertThat(store.resolve(review, new byte[] {7}, expires)).isTrue();
        IdempotencyRecord completed = r.toInFlightRecord().with(Status.COMPLETED, new byte[] {7}, null, expires);
        assertThat(store.find(r.keyHash())).contains(completed);
        assertThat(store.resolve(review, null, expires)).as("observed before the resolve").isFalse();
        assertThat(store.find(r.keyHash())).contains(completed);
        assertThat(store.resolve(completed, null, expires)).isTrue();
        assertThat(store.find(r.keyHash())).isEmpty();
        assertThat(store.resolve(completed, null, expires)).isFalse();
    }

    @Test
    void purgeDeletesOnlyExpiredCompletedRowsInBatches() {
        for (int i = 0; i < 7; i++) {
            ClaimRequest r = request("P-" + i, T0);
            store.claim(r);
            store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, T0.plusSeconds(i));
        }
        ClaimRequest inFlight = new ClaimRequest(Keys.hash("Orders.create", "", "P-live"), "Orders.create",
                "P-live", new byte[32], Tier.REVERSIBLE, T0, T0.plusSeconds(1), T0, Duration.ofSeconds(1));
        store.claim(inFlight);
        ClaimRequest review = request("P-review", T0.minusSeconds(100));
        store.claim(review);
        store.markNeedsReview(review.keyHash(), review.leaseUntil());

        Instant now = T0.plusSeconds(4); // P-0..P-4 expired (expiresAt <= now), P-5, P-6 not
        assertThat(store.purgeExpired(now, 2)).isEqualTo(2);
        assertThat(store.purgeExpired(now, 2)).isEqualTo(2);
        assertThat(store.purgeExpired(now, 2)).isEqualTo(1);
        assertThat(store.purgeExpired(now, 2)).isZero();
        assertThat(new JdbcPurgeJob(store, java.time.Clock.fixed(now, java.time.ZoneOffset.UTC), 2).purge())
                .isZero();
        assertThat(store.find(inFlight.keyHash())).isPresent();
        assertThat(store.find(review.keyHash())).isPresent();
        assertThat(store.find(request("P-5", T0).keyHash())).isPresent();
        assertThat(store.find(request("P-4", T0).keyHash())).isEmpty();
        assertThatThrownBy(() -> store.purgeExpired(now, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("batchSize");
    }

    @Test
    void purgeJobLoopsUntilABatchComesBackShort() {
        for (int i = 0; i < 25; i++) {
            ClaimRequest r = request("J-" + i, T0);
            store.claim(r);
            store.complete(r.keyHash(), r.leaseUntil(), new byte[] {1}, T0);
        }
        JdbcPurgeJob job = new JdbcPurgeJob(store, java.time.Clock.fixed(T0, java.time.ZoneOffset.UTC), 10);
        assertThat(job.purge()).isEqualTo(25);
        assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
                .isZero();
    }

    @Test
    void aDuplicateWaitsForTheUncommittedClaimThenSeesTheOutcomeOrTimesOut() throws Exception {
        ClaimRequest first = request("K-wait", T0);
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Void> owner = CompletableFuture.runAsync(() -> tx.executeWithoutResult(s -> {
            assertThat(store.claim(first).isTransactional()).isTrue();
            store.complete(first.keyHash(), first.leaseUntil(), new byte[] {42}, T0.plusSeconds(99));
            claimed.countDown();
            await(finish);
        }));
        assertThat(claimed.await(10, TimeUnit.SECONDS)).isTrue();
        ClaimResult timedOut = store.claim(request("K-wait", "args", T0, Duration.ofMillis(100)));
        assertThat(timedOut.kind()).isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);

        CompletableFuture<ClaimResult> duplicate = CompletableFuture.supplyAsync(
                () -> store.claim(request("K-wait", "args", T0, Duration.ofSeconds(10))));
        // still waiting for the owner's transaction a while later (it would have answered at once otherwise)
        assertThatThrownBy(() -> duplicate.get(300, TimeUnit.MILLISECONDS))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(duplicate).isNotDone();
        finish.countDown();
        owner.get(10, TimeUnit.SECONDS);
        ClaimResult seen = duplicate.get(10, TimeUnit.SECONDS);
        assertThat(seen.kind()).isEqualTo(ClaimResult.Kind.EXISTING);
        assertThat(seen.record().status()).isEqualTo(Status.COMPLETED);
        assertThat(seen.record().result()).containsExactly(42);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * An owner without a transaction (its claim committed in flight); a duplicate's claim and refused takeover inside
     * an open transaction: on H2 neither a failed INSERT nor an UPDATE whose condition fails locks the owner's row, so
     * the owner completes while the duplicate's transaction is still open (issue 10, item 7).
     */
    @Test
    void aDuplicateInsideATransactionHoldsNoLockOnTheOwnersCommittedClaim() throws Exception {
        Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        ClaimRequest owner = request("K-owner", now);
        assertThat(store.claim(owner).isAcquired()).isTrue();
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<ClaimResult> duplicate = CompletableFuture.supplyAsync(() -> tx.execute(s -> {
            ClaimResult seen = store.claim(request("K-owner", now.plusMillis(5)));
            assertThat(seen.record()).isEqualTo(owner.toInFlightRecord());
            ClaimResult refused = store.takeOver(request("K-owner", now.plusMillis(6)), seen.record());
            assertThat(store.markNeedsReviewIfStale(owner.keyHash(), owner.leaseUntil(),
                    owner.leaseUntil().plus(Duration.ofHours(1)))).isFalse();
            waiting.countDown();
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return refused;
        }));
        try {
            assertThat(waiting.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(CompletableFuture.supplyAsync(() -> store.complete(owner.keyHash(), owner.leaseUntil(),
                    new byte[] {7}, owner.expiresAt())).get(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            done.countDown();
        }
        assertThat(duplicate.get(30, TimeUnit.SECONDS).record()).isEqualTo(owner.toInFlightRecord());
        assertThat(store.find(owner.keyHash()).orElseThrow().result()).containsExactly(7);
    }

    /**
     * Two transactions claim two keys in opposite orders. H2 detects no such deadlock: one claim waits out its lock
     * timeout and answers LOCK_TIMEOUT (H2 rolled back that statement only, so its transaction goes on and commits),
     * and the other, whose claim waited for that commit, then reads the committed key. Nothing here is a
     * CallerTransactionAborted.
     */
    @Test
    void crossedClaimsEndInALockTimeoutThatLeavesTheTransactionUsable() throws Exception {
        Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        CountDownLatch firstClaims = new CountDownLatch(2);
        CompletableFuture<String> one = CompletableFuture.supplyAsync(() -> crossClaims("K-a", "K-b", now,
                firstClaims, Duration.ofSeconds(20)));
        CompletableFuture<String> two = CompletableFuture.supplyAsync(() -> crossClaims("K-b", "K-a", now,
                firstClaims, Duration.ofSeconds(1)));
        assertThat(two.get(60, TimeUnit.SECONDS)).isEqualTo("LOCK_TIMEOUT");
        assertThat(one.get(60, TimeUnit.SECONDS)).isEqualTo("EXISTING");
        assertThat(store.find(Keys.hash("Orders.create", "", "K-b")).orElseThrow().status())
                .isEqualTo(Status.IN_FLIGHT);
        assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
                .isEqualTo(2);
    }

    private String crossClaims(String first, String second, Instant now, CountDownLatch firstClaims,
            Duration secondLockTimeout) {
        return tx.execute(s -> {
            assertThat(store.claim(request(first, "args", now, Duration.ofSeconds(20))).isAcquired()).isTrue();
            firstClaims.countDown();
            try {
                assertThat(firstClaims.await(20, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return store.claim(request(second, "args", now, secondLockTimeout)).kind().name();
        });
    }
}
