package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Action;
import dev.idempotency.store.IdempotencyAudit.Attempt;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The audit of resolutions by hand in its table on each database: what the admin wrote reads back exactly, newest
 * first, per key; in a transaction a resolution and its entry commit or roll back together; a missing table names
 * the script that creates it.
 */
abstract class AbstractAuditTest {

    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00.123Z");
    private static final String OPERATION = "Payments.refund";

    abstract RealDatabase database();

    private String table;
    private JdbcIdempotencyStore store;
    private JdbcIdempotencyAudit audit;

    @BeforeEach
    void createTables() {
        table = TestSchema.uniqueTableName();
        database().createTable(table);
        TestSchema.create(database().dataSource(), database().dialect().auditSchemaLocation(), table);
        store = JdbcIdempotencyStore.builder(database().dataSource()).tableName(table).build();
        audit = JdbcIdempotencyAudit.of(store);
    }

    @AfterEach
    void dropTables() {
        TestSchema.drop(database().dataSource(), table);
    }

    private IdempotencyAdmin admin(Instant now) {
        return IdempotencyAdmin.builder(store).clock(Clock.fixed(now, ZoneOffset.UTC)).audit(audit).build();
    }

    /** An irreversible claim whose attempt died: in flight, its lease long over. */
    private void crashedClaim(String key) {
        crashedClaim(OPERATION, Tier.IRREVERSIBLE, key, new byte[32]);
    }

    private void crashedClaim(String operation, Tier tier, String key, byte[] fingerprint) {
        Instant then = NOW.minus(Duration.ofHours(1));
        store.claim(new ClaimRequest(Keys.hash(operation, "", key), operation, key, fingerprint, tier,
                then, then.plusSeconds(30), then.plus(Duration.ofDays(1)), Duration.ofSeconds(1)));
    }

    /** The fingerprint the executor gives a call with {@code arguments}, as it stored it for a first run. */
    private byte[] fingerprintOf(Object... arguments) {
        IdempotentOperation<String> probe = IdempotentOperation.builder("Probe.fingerprint", Tier.REVERSIBLE,
                ResultType.of(String.class)).build();
        IdempotentExecutor.builder(store).build().execute(probe, "probe", arguments, () -> "probed");
        return store.find(Keys.hash(probe.name(), "", "probe")).orElseThrow().fingerprint();
    }

    private IdempotentExecutor executor(DataSourceTransactionManager transactions) {
        return IdempotentExecutor.builder(store).clock(Clock.fixed(NOW, ZoneOffset.UTC))
                .transactions(new SpringTransactionBridge(transactions)).attempts(audit).build();
    }

    @Test
    void attemptsReadBackOldestFirstApartFromTheResolutionsAndOnlyTheFirstOnesOfAKey() {
        byte[] hash = Keys.hash(OPERATION, "", "R-1");
        for (int i = 0; i < IdempotencyAudit.ATTEMPTS_KEPT + 3; i++) {
            audit.attempt(hash, new Attempt(OPERATION, "R-1", Tier.IRREVERSIBLE, Status.NEEDS_REVIEW,
                    Attempt.Kind.REFUSED_HELD, "retry " + i, NOW.plusSeconds(i)));
        }
        Attempt reused = new Attempt(OPERATION, "R-2", Tier.IRREVERSIBLE, Status.COMPLETED, Attempt.Kind.KEY_REUSED,
                "digest ✓ " + "d".repeat(990), NOW);
        audit.attempt(Keys.hash(OPERATION, "", "R-2"), reused);
        crashedClaim("R-1");
        ResolvedBy alice = new ResolvedBy("alice", "no payout on the statement");
        assertThat(admin(NOW).release(OPERATION, "R-1", alice)).isTrue();

        java.util.List<Attempt> kept = admin(NOW).attempts(OPERATION, "", "R-1");
        assertThat(kept).hasSize(IdempotencyAudit.ATTEMPTS_KEPT);
        assertThat(kept.get(0)).isEqualTo(new Attempt(OPERATION, "R-1", Tier.IRREVERSIBLE, Status.NEEDS_REVIEW,
                Attempt.Kind.REFUSED_HELD, "retry 0", NOW));
        assertThat(kept).extracting(Attempt::at).isSorted();
        assertThat(admin(NOW).attempts(OPERATION, "", "R-2")).containsExactly(reused);
        assertThat(admin(NOW).history(OPERATION, "R-1")).as("the resolutions only").singleElement()
                .extracting(IdempotencyAudit.Entry::action).isEqualTo(Action.RELEASED);
        assertThat(admin(NOW).resolutions(10)).singleElement().extracting(IdempotencyAudit.Entry::key)
                .isEqualTo("R-1");
    }

    @Test
    void aRefusalInATransactionThatRollsBackStaysRecorded() {
        crashedClaim(OPERATION, Tier.IRREVERSIBLE, "R-5", fingerprintOf("R-5"));
        IdempotentOperation<String> refund = IdempotentOperation.builder(OPERATION, Tier.IRREVERSIBLE,
                ResultType.of(String.class)).lockTimeout("1s").build();
        DataSourceTransactionManager transactions = new DataSourceTransactionManager(database().dataSource());
        TransactionTemplate tx = new TransactionTemplate(transactions);
        IdempotentExecutor executor = executor(transactions);
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> tx.executeWithoutResult(status -> executor.execute(refund, "R-5",
                    new Object[] {"R-5"}, () -> "refunded"))).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        }

        assertThat(admin(NOW).find(OPERATION, "R-5")).get().extracting(IdempotencyAdmin.Entry::status)
                .isEqualTo(Status.NEEDS_REVIEW);
        assertThat(admin(NOW).attempts(OPERATION, "", "R-5")).extracting(Attempt::kind)
                .containsExactly(Attempt.Kind.HELD_STALE, Attempt.Kind.REFUSED_HELD);
    }

    @Test
    void aTakeoverInATransactionThatRollsBackLeavesNoAttemptAsItLeavesNoTakeover() {
        String operation = "Orders.create";
        crashedClaim(operation, Tier.REVERSIBLE, "O-1", fingerprintOf("O-1"));
        IdempotentOperation<String> order = IdempotentOperation.builder(operation, Tier.REVERSIBLE,
                ResultType.of(String.class)).lockTimeout("1s").build();
        DataSourceTransactionManager transactions = new DataSourceTransactionManager(database().dataSource());
        TransactionTemplate tx = new TransactionTemplate(transactions);
        IdempotentExecutor executor = executor(transactions);

        assertThatThrownBy(() -> tx.executeWithoutResult(status -> executor.execute(order, "O-1",
                new Object[] {"O-1"}, () -> {
                    throw new IllegalStateException("the order service failed");
                }))).isInstanceOf(IllegalStateException.class);
        assertThat(admin(NOW).find(operation, "O-1")).as("the takeover rolled back").get()
                .extracting(IdempotencyAdmin.Entry::createdAt).isEqualTo(NOW.minus(Duration.ofHours(1)));
        assertThat(admin(NOW).attempts(operation, "", "O-1")).as("and its record with it").isEmpty();

        String ordered = tx.execute(status -> executor.execute(order, "O-1", new Object[] {"O-1"}, () -> "ordered"));
        assertThat(ordered).isEqualTo("ordered");
        assertThat(admin(NOW).attempts(operation, "", "O-1")).singleElement().satisfies(a -> {
            assertThat(a.kind()).isEqualTo(Attempt.Kind.TOOK_OVER_STALE);
            assertThat(a.detail()).contains("the claim of " + NOW.minus(Duration.ofHours(1)));
        });
    }

    @Test
    void thePurgeDeletesTheAttemptsOfKeysWithoutARecordAndKeepsEveryResolution() {
        // held for review, resolved as executed with a ttl that is over: its record expired
        crashedClaim("R-1");
        for (int i = 0; i < 3; i++) {
            attempt("R-1", i);
        }
        assertThat(admin(NOW.minus(Duration.ofMinutes(50))).resolveExecuted(OPERATION, "R-1", "receipt-1",
                ResultType.of(String.class), Duration.ofMinutes(1), new ResolvedBy("alice", "paid out"))).isTrue();
        // still held (in flight, its lease over): its attempts stay; R-3: no record ever
        crashedClaim("R-2");
        attempt("R-2", 0);
        attempt("R-3", 0);

        long purged = new JdbcPurgeJob(store, Clock.fixed(NOW, ZoneOffset.UTC), 2, audit).purge();

        assertThat(purged).as("R-1's record").isEqualTo(1);
        assertThat(store.find(Keys.hash(OPERATION, "", "R-1"))).isEmpty();
        assertThat(admin(NOW).attempts(OPERATION, "", "R-1")).isEmpty();
        assertThat(admin(NOW).attempts(OPERATION, "", "R-3")).isEmpty();
        assertThat(admin(NOW).attempts(OPERATION, "", "R-2")).extracting(Attempt::detail).containsExactly("retry 0");
        assertThat(admin(NOW).history(OPERATION, "R-1")).as("the resolution is kept").singleElement()
                .extracting(e -> e.by().actor()).isEqualTo("alice");
        assertThatThrownBy(() -> new JdbcPurgeJob(new dev.idempotency.store.InMemoryIdempotencyStore(),
                Clock.systemUTC(), 2, audit)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("JdbcIdempotencyStore");
    }

    private void attempt(String key, int i) {
        audit.attempt(Keys.hash(OPERATION, "", key), new Attempt(OPERATION, key, Tier.IRREVERSIBLE,
                Status.NEEDS_REVIEW, Attempt.Kind.REFUSED_HELD, "retry " + i, NOW.minus(Duration.ofHours(1))));
    }

    @Test
    void resolutionsReadBackExactlyNewestFirstPerKey() {
        assertThat(audit.tableName()).isEqualTo(table + "_audit");
        crashedClaim("R-1");
        crashedClaim("R-2");
        ResolvedBy alice = new ResolvedBy("alice@example.com", "Kontoauszug geprüft: keine Auszahlung ✓");
        assertThat(admin(NOW).release(OPERATION, "R-1", alice)).isTrue();
        ResolvedBy bob = new ResolvedBy("bob", "gateway shows the payout went out");
        assertThat(admin(NOW.plusSeconds(1)).resolveExecuted(OPERATION, "R-2", "receipt-9",
                dev.idempotency.ResultType.of(String.class), Duration.ofDays(1), bob)).isTrue();

        IdempotencyAudit.Entry released = admin(NOW).history(OPERATION, "R-1").get(0);
        assertThat(released).isEqualTo(new IdempotencyAudit.Entry(OPERATION, "R-1", Tier.IRREVERSIBLE,
                Status.IN_FLIGHT, Action.RELEASED, alice, NOW));
        assertThat(admin(NOW).history(OPERATION, "R-2")).singleElement()
                .extracting(IdempotencyAudit.Entry::action, e -> e.by().actor())
                .containsExactly(Action.RESOLVED_EXECUTED, "bob");
        assertThat(admin(NOW).resolutions(10)).extracting(IdempotencyAudit.Entry::key).containsExactly("R-2", "R-1");
        assertThat(admin(NOW).resolutions(1)).extracting(IdempotencyAudit.Entry::key).containsExactly("R-2");
        assertThat(admin(NOW).history(OPERATION, "R-3")).isEmpty();
    }

    @Test
    void aResolutionAndItsEntryCommitOrRollBackTogether() {
        crashedClaim("R-1");
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(database().dataSource()));
        ResolvedBy alice = new ResolvedBy("alice", "no payout on the statement");
        tx.executeWithoutResult(status -> {
            assertThat(admin(NOW).release(OPERATION, "R-1", alice)).isTrue();
            status.setRollbackOnly();
        });
        assertThat(admin(NOW).find(OPERATION, "R-1")).as("the release rolled back").isPresent();
        assertThat(admin(NOW).history(OPERATION, "R-1")).as("and its entry with it").isEmpty();

        tx.executeWithoutResult(status -> admin(NOW).release(OPERATION, "R-1", alice));
        assertThat(admin(NOW).find(OPERATION, "R-1")).isEmpty();
        assertThat(admin(NOW).history(OPERATION, "R-1")).hasSize(1);
    }

    @Test
    void anAuditWithoutItsTableRollsTheResolutionBackAndNamesTheScript() {
        audit.verifyTable();
        new JdbcTemplate(database().dataSource()).execute("DROP TABLE " + table + "_audit");
        assertThatThrownBy(audit::verifyTable).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(table + "_audit")
                .hasMessageContaining(database().dialect().auditSchemaLocation());
        crashedClaim("R-1");
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(database().dataSource()));
        assertThatThrownBy(() -> tx.executeWithoutResult(status -> admin(NOW).release(OPERATION, "R-1",
                new ResolvedBy("alice", "checked"))))
                .isInstanceOf(IdempotencyStoreException.class)
                .hasMessageContaining("RELEASED Payments.refund 'R-1'")
                .hasMessageContaining(table + "_audit")
                .hasMessageContaining(database().dialect().auditSchemaLocation());
        assertThat(admin(NOW).find(OPERATION, "R-1")).as("no resolution without its entry").isPresent();
    }
}
