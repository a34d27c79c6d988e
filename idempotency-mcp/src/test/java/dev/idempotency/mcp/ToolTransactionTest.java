package dev.idempotency.mcp;

import static dev.idempotency.mcp.AbstractMcpToolsTest.call;
import static dev.idempotency.mcp.AbstractMcpToolsTest.hold;
import static dev.idempotency.mcp.AbstractMcpToolsTest.structured;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.mcp.RefundTools.Hold;
import dev.idempotency.mcp.RefundTools.HoldArgs;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.lang.reflect.UndeclaredThrowableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Tool calls in the application's transaction. A {@code REVERSIBLE} tool's compensation through MCP: each call runs in a Spring transaction on the store's
 * {@code DataSource} ({@link McpIdempotentTools.Builder#transaction}); when that transaction rolls back after the tool
 * returned (its commit fails), the compensation runs once and the key is free for the retry, both for an
 * {@link IdempotentTool} and for a bean's {@code @Idempotent(compensate = ...)} method. A declined elicitation's answer outlives the rollback of its call.
 * On H2 here; on PostgreSQL in
 * {@link PostgresToolTransactionIT}.
 */
class ToolTransactionTest {

    private static HikariDataSource pool;

    /** Set by a test: the transaction of the next tool call fails to commit, after the tool returned. */
    static final AtomicBoolean failNextCommit = new AtomicBoolean();

    private String table;
    private McpSyncServer server;
    private AnnotationConfigApplicationContext context;
    private final List<McpSyncClient> clients = new ArrayList<>();

    @BeforeAll
    static void open() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:mcp-compensation-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        pool = new HikariDataSource(config);
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    DataSource dataSource() {
        return pool;
    }

    JdbcDialect dialect() {
        return JdbcDialect.h2();
    }

    @BeforeEach
    void createTable() {
        failNextCommit.set(false);
        table = "idem_comp_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        new ResourceDatabasePopulator(new ByteArrayResource(McpServerFixture.script(dialect())
                .replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table).getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource());
    }

    @AfterEach
    void dropTable() {
        clients.forEach(McpSyncClient::closeGracefully);
        if (server != null) {
            server.closeGracefully();
        }
        if (context != null) {
            context.close();
        }
        McpServerFixture.dropTable(new JdbcTemplate(dataSource()), dialect(), table);
    }

    /** Each call in a transaction on {@code tm}; the tool's writes would be in it too. */
    static McpIdempotentTools.Transaction transaction(PlatformTransactionManager tm) {
        TransactionTemplate template = new TransactionTemplate(tm);
        return call -> template.execute(status -> {
            try {
                Object result = call.call();
                if (failNextCommit.getAndSet(false)) {
                    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                        @Override
                        public void beforeCommit(boolean readOnly) {
                            throw new IllegalStateException("the ledger refused the commit");
                        }
                    });
                }
                return result;
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new UndeclaredThrowableException(e);
            }
        });
    }

    private McpSyncClient serve(McpIdempotentTools tools) {
        return serve(tools, null);
    }

    private McpSyncClient serve(McpIdempotentTools tools,
            @Nullable Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> elicitation) {
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        InMemoryTransport transport = new InMemoryTransport(json);
        server = McpServer.sync(transport).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools.specifications()).build();
        McpSyncClient client = McpServerFixture.connect(transport, "alice", elicitation, Duration.ofSeconds(30));
        clients.add(client);
        return client;
    }

    @Test
    void aToolsCompensationRunsOnceWhenItsTransactionRollsBackAfterItReturnedAndTheRetryRunsAgain() {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource()).tableName(table).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).scope(McpIdempotentTools.principalScope())
                .transactions(SpringTransactionBridge.INSTANCE).build();
        AtomicInteger holds = new AtomicInteger();
        List<Hold> released = new ArrayList<>();
        IdempotentTool<HoldArgs, Hold> holdFunds = IdempotentTool.builder(
                IdempotentOperation.builder("Payments.hold", Tier.REVERSIBLE, ResultType.of(Hold.class)).build(),
                HoldArgs.class, a -> new Hold("H-" + holds.incrementAndGet(), a.orderId(), a.cents()))
                .name("hold_funds").compensation(released::add).build();
        McpSyncClient alice = serve(McpIdempotentTools.builder(executor).tool(holdFunds)
                .transaction(transaction(new DataSourceTransactionManager(dataSource()))).build());

        failNextCommit.set(true);
        CallToolResult failed = call(alice, "hold_funds", hold("A-1", 4999, "c-1"), Map.of());

        assertThat(structured(failed)).containsEntry("error", "tool_failed").containsEntry("retry", "same_call");
        assertThat(released).containsExactly(new Hold("H-1", "A-1", 4999));
        assertThat(new JdbcTemplate(dataSource()).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
                .as("the rolled-back claim left no row").isZero();

        CallToolResult retried = call(alice, "hold_funds", hold("A-1", 4999, "c-1"), Map.of());
        CallToolResult replayed = call(alice, "hold_funds", hold("A-1", 4999, "c-1"), Map.of());

        assertThat(structured(retried)).containsEntry("holdId", "H-2");
        assertThat(retried.meta()).containsEntry(McpMeta.REPLAYED, false);
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(holds).hasValue(2);
        assertThat(released).hasSize(1);
    }

    @Test
    void aDeclinedAnswerIsRecordedOutsideTheCallsTransactionAndOutlivesItsRollback() {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource()).tableName(table).build();
        McpConfirmations confirmations = McpConfirmations.builder(McpServerFixture.SECRET, store).tokens(true)
                .transactions(SpringTransactionBridge.INSTANCE).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).scope(McpIdempotentTools.principalScope())
                .transactions(SpringTransactionBridge.INSTANCE).confirmationGate(confirmations).build();
        AtomicInteger refunds = new AtomicInteger();
        IdempotentTool<HoldArgs, Hold> refund = IdempotentTool.builder(
                IdempotentOperation.builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Hold.class)).build(),
                HoldArgs.class, a -> new Hold("R-" + refunds.incrementAndGet(), a.orderId(), a.cents()))
                .name("refund").build();
        McpSyncClient alice = serve(McpIdempotentTools.builder(executor).tool(refund).confirmations(confirmations)
                .transaction(transaction(new DataSourceTransactionManager(dataSource()))).build(),
                request -> new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.DECLINE, null));

        CallToolResult declined = call(alice, "refund", hold("A-1", 4999, "d-1"), Map.of());

        assertThat(structured(declined)).containsEntry("error", "confirmation_declined");
        assertThat(refunds).hasValue(0);
        assertThat(confirmations.answers("alice", "Payments.refund", "d-1")).singleElement()
                .satisfies(a -> assertThat(a.action()).isEqualTo("decline"));
    }

    @Test
    void aCompensationOnAnotherTierIsRefusedWhenTheToolIsBuilt() {
        assertThatThrownBy(() -> IdempotentTool.builder(
                IdempotentOperation.builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Hold.class)).build(),
                HoldArgs.class, a -> new Hold("R", a.orderId(), a.cents())).name("refund")
                .compensation(h -> { }).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tool 'refund'").hasMessageContaining("only REVERSIBLE operations compensate");
    }

    public static class Holds {
        private final AtomicInteger held = new AtomicInteger();
        private final List<String> released = new java.util.concurrent.CopyOnWriteArrayList<>();

        public int held() {
            return held.get();
        }

        public List<String> released() {
            return released;
        }

        @Idempotent(key = "'HOLD:' + #idempotencyKey", tier = Tier.REVERSIBLE, operation = "hold_funds",
                compensate = "release")
        public Hold hold(String orderId, long cents, String idempotencyKey) {
            return new Hold("H-" + held.incrementAndGet(), orderId, cents);
        }

        public void release(String orderId, long cents, String idempotencyKey, Hold hold) {
            released.add(hold.holdId());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class Config {
        static DataSource dataSource;
        static String table;

        @Bean
        IdempotencyStore store() {
            return JdbcIdempotencyStore.builder(dataSource).tableName(table).build();
        }

        @Bean
        DataSourceTransactionManager transactionManager() {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        IdempotencyScope scope() {
            return McpIdempotentTools.principalScope();
        }

        @Bean
        Holds holds() {
            return new Holds();
        }
    }

    @Test
    void aBeansCompensateMethodRunsOnceWhenTheToolCallsTransactionRollsBackAfterItReturned() {
        Config.dataSource = dataSource();
        Config.table = table;
        context = new AnnotationConfigApplicationContext(Config.class);
        Holds holds = context.getBean(Holds.class);
        McpSyncClient alice = serve(McpIdempotentTools.builder(context.getBean(IdempotentExecutor.class))
                .bean(holds).transaction(transaction(context.getBean(PlatformTransactionManager.class))).build());

        failNextCommit.set(true);
        CallToolResult failed = call(alice, "hold_funds", hold("A-1", 4999, "b-1"), Map.of());
        CallToolResult retried = call(alice, "hold_funds", hold("A-1", 4999, "b-1"), Map.of());
        CallToolResult replayed = call(alice, "hold_funds", hold("A-1", 4999, "b-1"), Map.of());

        assertThat(structured(failed)).containsEntry("error", "tool_failed");
        assertThat(holds.released()).containsExactly("H-1");
        assertThat(structured(retried)).containsEntry("holdId", "H-2");
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(structured(replayed)).containsEntry("holdId", "H-2");
        assertThat(holds.held()).isEqualTo(2);
    }
}
