package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A claim borrows the caller's (pooled) H2 session and must give it back as it was: its own lock timeout, its
 * auto-commit; and putting a setting back must never hide why the claim failed.
 */
class H2SessionSettingsTest {

    private static final Instant T0 = Instant.parse("2026-01-02T03:04:05.678Z");

    private String url;
    private JdbcDataSource h2;
    private String table;

    @BeforeEach
    void setUp() {
        url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=4321";
        h2 = new JdbcDataSource();
        h2.setURL(url);
        table = TestSchema.uniqueTableName();
        TestSchema.create(h2, JdbcDialect.h2(), table);
    }

    @AfterEach
    void tearDown() {
        new JdbcTemplate(h2).execute("SHUTDOWN");
    }

    private static ClaimRequest request(String key, Duration lockTimeout) {
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key, new byte[32],
                Tier.REVERSIBLE, T0, T0.plusSeconds(30), T0.plus(Duration.ofHours(1)), lockTimeout);
    }

    private static int lockTimeoutOf(Connection con) throws SQLException {
        return ((SessionLocal) con.unwrap(JdbcConnection.class).getSession()).getLockTimeout();
    }

    @Test
    void aClaimGivesTheSessionItsOwnLockTimeoutBack() throws SQLException {
        try (Connection con = h2.getConnection()) {
            assertThat(lockTimeoutOf(con)).as("the URL's LOCK_TIMEOUT").isEqualTo(4321);
            SingleConnectionDataSource pooled = new SingleConnectionDataSource(con, true);
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pooled).tableName(table).build();

            assertThat(store.claim(request("K-1", Duration.ofMillis(250))).isAcquired()).isTrue();
            assertThat(lockTimeoutOf(con)).as("after a claim outside a transaction").isEqualTo(4321);

            new JdbcTemplate(pooled).execute("SET LOCK_TIMEOUT 777");
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(pooled));
            tx.executeWithoutResult(s -> {
                assertThat(store.claim(request("K-2", Duration.ofSeconds(3))).isTransactional()).isTrue();
                assertThat(store.claim(request("K-1", Duration.ofSeconds(3))).kind())
                        .isEqualTo(ClaimResult.Kind.EXISTING);
            });
            assertThat(lockTimeoutOf(con)).as("after claims in a transaction").isEqualTo(777);
        }
    }

    @Test
    void aLockTimeoutStaysALockTimeoutWhenTheSettingsCannotBePutBack() throws Exception {
        JdbcIdempotencyStore owner = JdbcIdempotencyStore.builder(h2).tableName(table).build();
        AtomicInteger setLockTimeouts = new AtomicInteger();
        AtomicInteger autoCommitRestores = new AtomicInteger();
        // every attempt to put a setting back fails: the second SET LOCK_TIMEOUT of a claim, setAutoCommit(true)
        JdbcIdempotencyStore duplicate = JdbcIdempotencyStore.builder(new RefusingRestores(h2, setLockTimeouts,
                autoCommitRestores)).tableName(table).dialect(JdbcDialect.h2()).build();
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(h2));

        tx.executeWithoutResult(s -> {
            assertThat(owner.claim(request("K-held", Duration.ofSeconds(1))).isTransactional()).isTrue();
            // the owner's row is uncommitted: the duplicate waits 100 ms, times out, and cannot restore anything
            ClaimResult answer = duplicate.claim(request("K-held", Duration.ofMillis(100)));
            assertThat(answer.kind()).isEqualTo(ClaimResult.Kind.LOCK_TIMEOUT);
        });
        assertThat(setLockTimeouts).as("set, then the refused restore").hasValue(2);
        assertThat(autoCommitRestores).hasValue(1);
    }

    @Test
    void aRestoreThatFailsAfterTheWorkSucceededIsThrown() {
        SQLException refused = new SQLException("refused");
        assertThatThrownBy(() -> JdbcDialect.thenRestore(() -> "done", () -> {
            throw refused;
        })).isSameAs(refused);
        SQLException primary = new SQLException("the real failure");
        assertThatThrownBy(() -> JdbcDialect.thenRestore(() -> {
            throw primary;
        }, () -> {
            throw refused;
        })).isSameAs(primary).satisfies(e -> assertThat(e.getSuppressed()).containsExactly(refused));
    }

    /** Connections whose attempts to put a session setting back fail. */
    private static final class RefusingRestores extends AbstractDataSource {
        private final JdbcDataSource target;
        private final AtomicInteger setLockTimeouts;
        private final AtomicInteger autoCommitRestores;

        RefusingRestores(JdbcDataSource target, AtomicInteger setLockTimeouts, AtomicInteger autoCommitRestores) {
            this.target = target;
            this.setLockTimeouts = setLockTimeouts;
            this.autoCommitRestores = autoCommitRestores;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection real = target.getConnection();
            InvocationHandler handler = (proxy, method, args) -> {
                if (method.getName().equals("prepareStatement")
                        && String.valueOf(args[0]).startsWith("SET LOCK_TIMEOUT")
                        && setLockTimeouts.incrementAndGet() > 1) {
                    throw new SQLException("SET LOCK_TIMEOUT refused (test)");
                }
                if (method.getName().equals("setAutoCommit") && Boolean.TRUE.equals(args[0])
                        && !real.getAutoCommit()) {
                    autoCommitRestores.incrementAndGet();
                    real.setAutoCommit(true); // the session is fine, but the driver reports a failure
                    throw new SQLException("setAutoCommit refused (test)");
                }
                try {
                    return method.invoke(real, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            };
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, handler);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
        }
    }
}
