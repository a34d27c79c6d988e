package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotentOperation;
import dev.idempotency.store.ClaimRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
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
        TransactionTemplate rr = new TransactionTemplate(new DataSourceTransactionManager(database.dataSource()));
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
        assertThat(stored).startsWith(r.now().toString().substring(0, 23));
    }
}
