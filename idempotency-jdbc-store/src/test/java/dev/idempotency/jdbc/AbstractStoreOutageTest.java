package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.StoreDown;
import dev.idempotency.Tier;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.CircuitBreakerStore;
import dev.idempotency.store.CircuitOpenException;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.tck.MutableClock;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * A real outage under load, and the recovery: eight threads call through a JDBC store whose database refuses them,
 * behind a {@link CircuitBreakerStore} under a {@link CaffeinePrefilter}. Two outages: the test's DataSource switched
 * to refuse connections, and the database itself locking out the test's own login and killing every connection of
 * its pool (the other builds on the same server are untouched: the login, its pool and its table are the test's
 * own). Asserted: once the circuit is open no call reaches the database and none is held (each fails in well under
 * the connection and lock timeouts), a cached outcome keeps replaying, a {@code PROCEED_UNGUARDED} operation runs,
 * and once the database is back a trial call closes the circuit and calls are recorded again.
 */
abstract class AbstractStoreOutageTest {

    private static final int THREADS = 8;
    private static final int CALLS_PER_THREAD = 20;
    private static final int THRESHOLD = 5;
    private static final Duration OPEN_FOR = Duration.ofMinutes(1);
    /** How long a pool waits for a connection before giving up: what every caller would wait without a breaker. */
    private static final long CONNECTION_TIMEOUT_MILLIS = 2_000;
    /** A call refused by an open circuit must end far below both timeouts, even on a loaded 2-core machine. */
    private static final Duration FAST = Duration.ofMillis(500);

    private static final IdempotentOperation<String> ORDERS = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).lockTimeout("10s").build();
    private static final IdempotentOperation<String> CARTS = IdempotentOperation
            .builder("Carts.add", Tier.REVERSIBLE, ResultType.of(String.class))
            .onStoreDown(StoreDown.PROCEED_UNGUARDED).compensated(true).build();

    /** The server's URL, as an administrator (the environment variable). */
    protected abstract String adminUrl();

    protected abstract JdbcDialect dialect();

    /** Creates a login of the test's own that may use {@code table}. */
    protected abstract void createLogin(JdbcTemplate admin, String login, String table);

    /** Refuses every new connection of {@code login}, then kills every connection it has open. */
    protected abstract void lockOutAndKill(JdbcTemplate admin, String login);

    protected abstract void allow(JdbcTemplate admin, String login);

    protected abstract void dropLogin(JdbcTemplate admin, String login);

    // the breaker's clock: the cool-down passes when the test says so, never during the load
    private final MutableClock breakerClock = MutableClock.at(Instant.parse("2026-01-01T10:00:00Z"));
    private final List<IdempotencyEvent> events = new CopyOnWriteArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicInteger connectionsAsked = new AtomicInteger();
    private volatile boolean refusing;
    private final String login = "idem_u" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String table = TestSchema.uniqueTableName();
    private JdbcTemplate admin;
    private HikariDataSource pool;
    private CircuitBreakerStore breaker;
    private IdempotentExecutor executor;
    private IdempotentExecutor direct;

    @BeforeEach
    void start() {
        admin = new JdbcTemplate(new DriverManagerDataSource(adminUrl()));
        TestSchema.create(admin.getDataSource(), dialect(), table);
        createLogin(admin, login, table);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(adminUrl().replaceAll("([?&])user=[^&]*", "$1user=" + login));
        config.setMaximumPoolSize(THREADS);
        config.setMinimumIdle(THREADS);
        config.setConnectionTimeout(CONNECTION_TIMEOUT_MILLIS);
        config.setValidationTimeout(1_000);
        config.setInitializationFailTimeout(10_000);
        config.setPoolName("idempotency-outage-" + login);
        pool = new HikariDataSource(config);
        DataSource switched = new DelegatingDataSource(pool) {
            @Override
            public Connection getConnection() throws SQLException {
                connectionsAsked.incrementAndGet();
                if (refusing) {
                    throw new SQLException("Connection refused (the test's switch)", "08001");
                }
                return super.getConnection();
            }
        };
        IdempotencyStore jdbc = JdbcIdempotencyStore.builder(switched).dialect(dialect()).tableName(table).build();
        breaker = CircuitBreakerStore.wrap(jdbc).failureThreshold(THRESHOLD).openFor(OPEN_FOR).clock(breakerClock)
                .build();
        executor = IdempotentExecutor.builder(CaffeinePrefilter.wrap(breaker).build()).listener(events::add).build();
        direct = IdempotentExecutor.builder(jdbc).build();
    }

    @AfterEach
    void stop() {
        try {
            allow(admin, login);
            if (pool != null) {
                pool.close();
            }
            lockOutAndKill(admin, login);
            dropLogin(admin, login);
        } finally {
            TestSchema.drop(admin.getDataSource(), table);
        }
    }

    @Test
    void aDataSourceThatRefusesConnectionsIsGivenUpOnThenTriedAgain() throws Exception {
        outage(() -> refusing = true, () -> refusing = false);
    }

    @Test
    void aDatabaseThatLocksOutAndKillsThePoolIsGivenUpOnThenTriedAgain() throws Exception {
        outage(() -> lockOutAndKill(admin, login), () -> allow(admin, login));
    }

    private void outage(Runnable down, Runnable up) throws Exception {
        assertThat(call(ORDERS, "CACHED")).isEqualTo("run-1");

        down.run();
        List<Attempt> attempts = load("DOWN", ORDERS);
        assertThat(attempts).hasSize(THREADS * CALLS_PER_THREAD).allSatisfy(a -> {
            assertThat(a.thrown).isInstanceOf(IdempotencyStoreException.class);
            assertThat(((IdempotencyStoreException) a.thrown).methodRan()).isFalse();
        });
        assertThat(runs).hasValue(1);
        assertThat(breaker.state()).isEqualTo(CircuitBreakerStore.State.OPEN);
        List<Attempt> failedFast = attempts.stream()
                .filter(a -> a.thrown.getCause() instanceof CircuitOpenException open && !open.storeAsked()).toList();
        // at most the calls that reached the database before it opened (THRESHOLD, plus one per thread already
        // past the breaker) were held for a timeout; every other call was refused at once
        assertThat(failedFast.size()).isGreaterThanOrEqualTo(attempts.size() - THRESHOLD - THREADS);
        assertThat(failedFast).allSatisfy(a -> assertThat(a.took).isLessThan(FAST));

        // while open: nothing reaches the database, a committed outcome still replays, unguarded calls run
        int asked = connectionsAsked.get();
        events.clear();
        for (int i = 0; i < 20; i++) {
            long t0 = System.nanoTime();
            Throwable thrown = catchCall(ORDERS, "NEW-" + i);
            assertThat(thrown).hasCauseInstanceOf(CircuitOpenException.class);
            assertThat(((CircuitOpenException) thrown.getCause()).storeAsked()).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(FAST);
        }
        assertThat(call(ORDERS, "CACHED")).isEqualTo("run-1");
        assertThat(call(CARTS, "CART-1")).isEqualTo("run-2");
        assertThat(connectionsAsked).hasValue(asked);
        assertThat(events.stream().map(IdempotencyEvent::outcome).distinct())
                .containsExactly(Outcome.FAILED, Outcome.REPLAYED_CACHED, Outcome.UNGUARDED);

        // back: after the cool-down a trial call closes the circuit (a pooled connection killed in the outage may
        // fail the first trial: then the circuit opens again and the next cool-down tries again)
        up.run();
        await().atMost(30, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> {
            breakerClock.advance(OPEN_FOR.plusSeconds(1));
            catchCall(ORDERS, "TRIAL-" + System.nanoTime());
            return breaker.state() == CircuitBreakerStore.State.CLOSED;
        });
        int before = runs.get();
        List<Attempt> after = load("UP", ORDERS);
        assertThat(after).allSatisfy(a -> assertThat(a.thrown).isNull());
        assertThat(runs.get() - before).isEqualTo(THREADS * CALLS_PER_THREAD);
        // recorded in the database: another executor, without the pre-filter, replays them
        for (int t = 0; t < THREADS; t++) {
            String key = "UP-" + t + "-0";
            String replayed = direct.execute(ORDERS, key, new Object[] {key}, () -> "ran again");
            assertThat(replayed).startsWith("run-");
        }
    }

    private String call(IdempotentOperation<String> op, String key) {
        IdempotentExecutor.Compensation<String> undo = op.onStoreDown() == StoreDown.PROCEED_UNGUARDED ? r -> { }
                : null;
        return executor.execute(op, key, new Object[] {key}, () -> "run-" + runs.incrementAndGet(), undo);
    }

    private Throwable catchCall(IdempotentOperation<String> op, String key) {
        try {
            call(op, key);
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    private record Attempt(Duration took, Throwable thrown) {
    }

    /** THREADS threads, CALLS_PER_THREAD calls each, each with a key of its own, started together. */
    private List<Attempt> load(String prefix, IdempotentOperation<String> op) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<List<Attempt>>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(threads.submit(() -> {
                    go.await();
                    List<Attempt> mine = new ArrayList<>();
                    for (int i = 0; i < CALLS_PER_THREAD; i++) {
                        long t0 = System.nanoTime();
                        Throwable thrown = catchCall(op, prefix + "-" + thread + "-" + i);
                        mine.add(new Attempt(Duration.ofNanos(System.nanoTime() - t0), thrown));
                    }
                    return mine;
                }));
            }
            go.countDown();
            List<Attempt> all = new ArrayList<>();
            for (Future<List<Attempt>> f : futures) {
                all.addAll(f.get(2, TimeUnit.MINUTES));
            }
            return all;
        } finally {
            threads.shutdownNow();
        }
    }
}
