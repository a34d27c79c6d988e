package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Action;
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
        Instant then = NOW.minus(Duration.ofHours(1));
        store.claim(new ClaimRequest(Keys.hash(OPERATION, "", key), OPERATION, key, new byte[32], Tier.IRREVERSIBLE,
                then, then.plusSeconds(30), then.plus(Duration.ofDays(1)), Duration.ofSeconds(1)));
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
