package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link IdempotentExecutor} over the JDBC store on H2, with and without a Spring-managed transaction. */
class IdempotentExecutorH2Test {

    record Line(String sku, int quantity, BigDecimal price) {
    }

    record Receipt(String orderId, BigDecimal total, List<Line> lines) {
    }

    private static final IdempotentOperation<Receipt> CREATE_ORDER = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(Receipt.class)).ttl("1h").build();

    private JdbcDataSource dataSource;
    private String table;
    private JdbcTemplate jdbc;
    private TransactionTemplate tx;
    private IdempotentExecutor executor;
    private final AtomicInteger runs = new AtomicInteger();

    @BeforeEach
    void setUp() {
        dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        table = TestSchema.uniqueTableName();
        TestSchema.create(dataSource, JdbcDialect.h2(), table);
        jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, total DECIMAL(12, 2))");
        tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        executor = IdempotentExecutor.builder(JdbcIdempotencyStore.builder(dataSource).tableName(table).build())
                .transactions(new SpringTransactionBridge()).build();
    }

    @AfterEach
    void tearDown() {
        jdbc.execute("SHUTDOWN");
    }

    private Receipt createOrder(String approvalNo, BigDecimal amount) {
        return executor.execute(CREATE_ORDER, "APPROVAL:" + approvalNo, new Object[] {approvalNo, amount}, () -> {
            runs.incrementAndGet();
            String id = "order-" + approvalNo + "-" + runs.get();
            jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", id, amount);
            return new Receipt(id, amount, List.of(new Line("SKU-1", 2, new BigDecimal("1.50")),
                    new Line("SKU-2", 1, amount.subtract(new BigDecimal("3.00")))));
        });
    }

    private int orders() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM orders", Integer.class);
    }

    @Test
    void theFirstCallRunsAndTheDuplicateReplaysTheSameResult() {
        Receipt first = createOrder("A-1", new BigDecimal("10.50"));
        Receipt again = createOrder("A-1", new BigDecimal("10.50"));
        assertThat(runs).hasValue(1);
        assertThat(orders()).isEqualTo(1);
        assertThat(again).isEqualTo(first);
        assertThat(again.total()).isEqualByComparingTo("10.50").hasToString("10.50");
        assertThat(again.lines()).containsExactly(new Line("SKU-1", 2, new BigDecimal("1.50")),
                new Line("SKU-2", 1, new BigDecimal("7.50")));
    }

    @Test
    void theSameKeyWithOtherArgumentsIsRefused() {
        createOrder("A-2", new BigDecimal("10.50"));
        assertThatThrownBy(() -> createOrder("A-2", new BigDecimal("99.00")))
                .isInstanceOf(IdempotencyKeyReusedException.class).hasMessageContaining("APPROVAL:A-2");
        assertThat(runs).hasValue(1);
    }

    @Test
    void insideATransactionTheClaimAndResultCommitWithTheBusinessWrites() {
        Receipt first = tx.execute(s -> createOrder("A-3", new BigDecimal("20.00")));
        Receipt replay = tx.execute(s -> createOrder("A-3", new BigDecimal("20.00")));
        assertThat(replay).isEqualTo(first);
        assertThat(runs).hasValue(1);
        assertThat(jdbc.queryForObject("SELECT status FROM " + table, String.class)).isEqualTo("COMPLETED");
    }

    @Test
    void aRolledBackTransactionLeavesNoRowAndTheRetryRuns() {
        tx.executeWithoutResult(s -> {
            createOrder("A-4", new BigDecimal("30.00"));
            s.setRollbackOnly();
        });
        assertThat(runs).hasValue(1);
        assertThat(orders()).isZero();
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class)).isZero();

        Receipt retry = tx.execute(s -> createOrder("A-4", new BigDecimal("30.00")));
        assertThat(runs).hasValue(2);
        assertThat(orders()).isEqualTo(1);
        assertThat(retry.orderId()).isEqualTo("order-A-4-2");
        assertThat(createOrder("A-4", new BigDecimal("30.00"))).isEqualTo(retry);
        assertThat(runs).hasValue(2);
    }

    @Test
    void aFailedCallReleasesTheKeySoThatTheRetryRuns() {
        assertThatThrownBy(() -> executor.execute(CREATE_ORDER, "APPROVAL:A-5", new Object[] {"A-5"}, () -> {
            runs.incrementAndGet();
            throw new IllegalStateException("gateway down");
        })).isInstanceOf(IllegalStateException.class).hasMessage("gateway down");
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class)).isZero();
        createOrder("A-5", BigDecimal.ONE);
        assertThat(runs).hasValue(2);
    }
}
