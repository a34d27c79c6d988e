package dev.idempotency.benchmarks.paths;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.benchmarks.Database;
import dev.idempotency.benchmarks.GuardTables;
import dev.idempotency.benchmarks.RunTables;
import dev.idempotency.benchmarks.orders.Receipt;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * The cost of each path of one {@code @Idempotent} call through the Spring aspect (SpEL key evaluation included), in
 * nanoseconds per call, one thread:
 * <ul>
 *   <li>{@code directCall}: the method on the bare object, no proxy: the floor of a call;</li>
 *   <li>{@code plainCall}: a method without {@code @Idempotent} on the same (proxied) bean;</li>
 *   <li>{@code readOnlyCall}: a {@code READ_ONLY} method: the contract says the store is never touched;</li>
 *   <li>{@code firstExecution}: a new key each call: claim, run, record;</li>
 *   <li>{@code replayFromStore}: the same key again: the store answers with the recorded result;</li>
 *   <li>{@code replayFromPrefilter}: the same, with the Caffeine pre-filter in front of the store.</li>
 * </ul>
 * {@code store} is the in-memory store ({@code memory}, no transaction manager) or the JDBC store on in-memory H2
 * or PostgreSQL (each with a {@code DataSourceTransactionManager}; the method is also {@code @Transactional}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PathBenchmark {

    private static final String REPLAYED = "replayed-1";

    @Param({"memory", "h2", "postgresql"})
    public String store;

    private AnnotationConfigApplicationContext context;
    private PathService service;
    private PathService bare;
    private HikariDataSource pool;
    private Database db;
    private String table;
    private InMemoryIdempotencyStore memory;
    private boolean clearEachIteration;
    private long n;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
        clearEachIteration = method.equals("firstExecution");
        try {
            start(method);
        } catch (RuntimeException | Error e) {
            // JMH skips the tear-down of a trial whose set-up failed: clean up here
            tearDown();
            throw e;
        }
    }

    private void start(String method) {
        IdempotencyStore base;
        context = new AnnotationConfigApplicationContext();
        if (store.equals("memory")) {
            memory = new InMemoryIdempotencyStore();
            base = memory;
            context.register(InMemory.class);
        } else {
            db = Database.of(store);
            pool = db.pool(2);
            table = RunTables.newRunId() + "_paths";
            GuardTables.createLibraryTable(db, pool, table);
            base = JdbcIdempotencyStore.builder(pool).tableName(table).build();
            context.registerBean(DataSource.class, () -> pool, bd -> bd.setDestroyMethodName(""));
            context.register(OnJdbc.class);
        }
        IdempotencyStore chosen = method.equals("replayFromPrefilter")
                ? CaffeinePrefilter.wrap(base).transactions(SpringTransactionBridge.INSTANCE).build()
                : base;
        context.registerBean(IdempotencyStore.class, () -> chosen);
        context.registerBean(PathService.class, store.equals("memory") ? PathService::new
                : PathService.Transactional::new);
        context.refresh();
        service = context.getBean(PathService.class);
        bare = new PathService();
        Receipt first = service.place(REPLAYED, 1999);
        Receipt again = service.place(REPLAYED, 1999);
        if (!first.equals(again)) {
            throw new IllegalStateException("no replay on " + store + ": " + first + " then " + again);
        }
    }

    @Setup(Level.Iteration)
    public void emptyBeforeFirstExecutions() {
        if (!clearEachIteration) {
            return;
        }
        if (memory != null) {
            // every record here is completed: purging "as of a century from now" empties the store
            memory.purgeExpired(Instant.now().plus(Duration.ofDays(36_500)), Integer.MAX_VALUE);
        } else {
            Database.execute(pool, "TRUNCATE TABLE " + table);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (context != null) {
            context.close();
        }
        if (pool != null) {
            if (table != null) {
                GuardTables.dropLibraryTable(db, pool, table);
            }
            pool.close();
        }
    }

    @Benchmark
    public Receipt directCall() {
        return bare.plain("order-1", 1999);
    }

    @Benchmark
    public Receipt plainCall() {
        return service.plain("order-1", 1999);
    }

    @Benchmark
    public Receipt readOnlyCall() {
        return service.readOnly("order-1", 1999);
    }

    @Benchmark
    public Receipt firstExecution() {
        return service.place("first-" + (++n), 1999);
    }

    @Benchmark
    public Receipt replayFromStore() {
        return service.place(REPLAYED, 1999);
    }

    @Benchmark
    public Receipt replayFromPrefilter() {
        return service.place(REPLAYED, 1999);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class InMemory {
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(proxyTargetClass = true)
    @EnableIdempotency
    static class OnJdbc {
        @Bean
        DataSourceTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }
}
