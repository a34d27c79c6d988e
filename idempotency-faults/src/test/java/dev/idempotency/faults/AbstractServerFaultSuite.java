package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What only a database server does: deadlocks between two transactions (PostgreSQL and MariaDB detect them and
 * kill one; H2 here would only time out).
 */
abstract class AbstractServerFaultSuite extends AbstractFaultSuite {

    /**
     * What one caller saw.
     *
     * @param value       the value of its call, if it returned
     * @param caught      the exception of its call, which it caught and went on from
     * @param commitError what its own commit threw (the transaction was marked rollback-only)
     */
    record Caller(@Nullable String value, @Nullable RuntimeException caught, @Nullable RuntimeException commitError) {
    }

    /**
     * A caller that locks account {@code first}, writes its own marker row (and {@code pad} more rows: InnoDB picks
     * the transaction with less work as the victim), then calls {@code move(key)}; if that fails, it catches the
     * exception and goes on writing (as the victim of issue 10 #6 did), then commits. Before the call it tells its
     * session id through {@code session} and {@code locked}.
     */
    private Caller caller(String key, String marker, String first, int pad, @Nullable CountDownLatch locked,
            @Nullable AtomicReference<String> session) {
        AtomicReference<String> value = new AtomicReference<>();
        AtomicReference<RuntimeException> caught =
                new AtomicReference<>();
        try {
            app.tx().executeWithoutResult(s -> {
                jdbcOf().update("UPDATE " + database.tables.accounts() + " SET balance = balance + 10 WHERE id = ?",
                        first);
                jdbcOf().update("INSERT INTO " + database.tables.business() + " (id, kind, ref, val)"
                        + " VALUES (?, 'OUTER', ?, ?)", marker, key, marker);
                for (int i = 0; i < pad; i++) {
                    jdbcOf().update("INSERT INTO " + database.tables.business() + " (id, kind, ref, val)"
                            + " VALUES (?, 'PAD', ?, ?)", marker + "-pad-" + i, key, marker);
                }
                if (session != null) {
                    session.set(jdbcOf().execute((java.sql.Connection c) -> database.sessionId(c)));
                }
                if (locked != null) {
                    locked.countDown();
                }
                try {
                    value.set(app.shop.move(key));
                } catch (RuntimeException e) {
                    caught.set(e);
                    jdbcOf().update("INSERT INTO " + database.tables.business() + " (id, kind, ref, val)"
                            + " VALUES (?, 'AFTER', ?, ?)", marker + "-after", key, marker);
                }
            });
        } catch (RuntimeException e) {
            return new Caller(value.get(), caught.get(), e);
        }
        return new Caller(value.get(), caught.get(), null);
    }

    /** Whether the session {@code id} waits for a lock, as the server says. */
    private boolean waitsOnALock(String id) {
        String sql = database.kind == FaultDatabase.Kind.POSTGRESQL
                ? "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'"
                : "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ?"
                        + " AND trx_state = 'LOCK WAIT'";
        Integer n = jdbc.queryForObject(sql, Integer.class, Long.parseLong(id));
        return n != null && n > 0;
    }

    /** A template on the application's DataSource: joins the caller's transaction. */
    private JdbcTemplate jdbcOf() {
        return new JdbcTemplate(injector);
    }

    @Test
    void deadlockAroundTheClaimTheVictimIsTransientCommitsNothingAndTheRetryReplays() throws Exception {
        String key = unique("deadlock");
        otherFaults.incrementAndGet();
        // T1: locks B, claims the key, is held; T2: locks A, then claims the same key and waits on T1's claim row;
        // T1 released: updates A, waits on T2. A cycle through the claim: the server kills one of them, T2 here
        // (PostgreSQL: the one that waited first detects the deadlock; InnoDB: the one with less work, T1 has more)
        Pauses.Pause pause = pauses.register("MOVE:" + key);
        CountDownLatch t2Locked = new CountDownLatch(1);
        AtomicReference<String> t2Session = new AtomicReference<>();
        Future<Caller> t1 = threads.submit(() -> caller(key, key + "-T1", "B", 10, null, null));
        pause.awaitEntered();
        Future<Caller> t2 = threads.submit(() -> caller(key, key + "-T2", "A", 0, t2Locked, t2Session));
        assertThat(t2Locked.await(30, TimeUnit.SECONDS)).isTrue();
        await("T2 waits on T1's claim row").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10))
                .until(() -> waitsOnALock(t2Session.get()));
        pause.release();
        Caller one = t1.get(60, TimeUnit.SECONDS);
        Caller two = t2.get(60, TimeUnit.SECONDS);

        assertThat(two.caught()).as("T2, which waited first at the claim, is the victim: T1 %s, T2 %s", one, two)
                .isNotNull();
        assertThat(one.caught() == null ^ two.caught() == null)
                .as("exactly one of the two is the victim: T1 %s, T2 %s", one, two).isTrue();
        Caller victim = one.caught() != null ? one : two;
        Caller survivor = victim == one ? two : one;
        String victimMarker = key + (victim == one ? "-T1" : "-T2");
        String survivorMarker = key + (victim == one ? "-T2" : "-T1");

        assertThat(victim.caught()).as("the victim surfaces as Spring's transient translation (retry the transaction)")
                .isInstanceOf(TransientDataAccessException.class);
        assertThat(rows("OUTER", key)).as("the survivor's transaction committed, the victim's did not")
                .isEqualTo(1);
        assertThat(committed("OUTER", key)).containsExactly(survivorMarker);
        assertThat(rows("AFTER", key)).as("nothing the victim wrote after catching it committed").isZero();
        assertThat(victim.commitError()).as("the victim's transaction was rollback-only").isNotNull();
        assertThat(survivor.value()).isNotNull();
        assertThat(committed("MOVE", key)).containsExactly(survivor.value());

        String retried = retryWhileInProgress(() -> app.shop.move(key));

        assertThat(retried).as("the victim's retry replays the survivor's outcome").isEqualTo(survivor.value());
        assertThat(committed("MOVE", key)).containsExactly(survivor.value());
        assertThat(victimMarker).isNotEqualTo(survivorMarker);
    }
}
