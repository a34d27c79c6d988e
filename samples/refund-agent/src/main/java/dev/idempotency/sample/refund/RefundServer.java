package dev.idempotency.sample.refund;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.mcp.IdempotentTool;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.mcp.McpIdempotentTools;
import dev.idempotency.mcp.McpStdioGuard;
import dev.idempotency.spring.SpringTransactionBridge;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.server.transport.StdioMcpTransport;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.UndeclaredThrowableException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The refund tool server, over MCP stdio: {@code lookup_order} (READ_ONLY), {@code hold_funds} (REVERSIBLE, released
 * by its compensation when its transaction rolls back) and {@code refund} (IRREVERSIBLE, confirmed first), on the JDBC store over an embedded H2, or PostgreSQL with
 * {@code --postgres <jdbc url>}. The payment gateway is simulated and slow on the first refund
 * ({@code --gateway-delay-ms}, 1500 unless set), so that a client with a shorter timeout gives up while it runs.
 * Each tool call runs in a transaction on the store's database; the ledger refuses the first commit of a hold on
 * {@code A-1002} (simulated), so that the story shows the compensation releasing the gateway's hold.
 * {@code --revision 2026-07-28} serves the same tools on that revision (stateless; the refund's confirmation by
 * {@code input_required}), and the process ends when its input does.
 *
 * <p>Any MCP client can start it: {@code mvn -q -pl samples/refund-agent -am package -DskipTests exec:java
 * -Dexec.mainClass=dev.idempotency.sample.refund.RefundServer}. Nothing but MCP messages goes to stdout.
 */
public final class RefundServer {

    record OrderArgs(String orderId) {
    }

    record Order(String orderId, long cents, String status, int refundsExecuted, int holdsReleased) {
    }

    record HoldArgs(String orderId, long cents) {
    }

    record Hold(String holdId, String orderId, long cents) {
    }

    record RefundArgs(String orderId, long cents) {
    }

    record Receipt(String refundId, String orderId, long cents) {
    }

    /** The simulated payment gateway: what it really did, whatever the clients saw. */
    static final class Gateway {
        final Map<String, Long> orders = Map.of("A-1001", 4999L, "A-1002", 12000L);
        final Map<String, Integer> refunds = new ConcurrentHashMap<>();
        final AtomicInteger holds = new AtomicInteger();
        final AtomicInteger holdsReleased = new AtomicInteger();
        /** Orders whose next hold the ledger refuses to commit, once. */
        final java.util.Set<String> ledgerRefusesOnce = ConcurrentHashMap.newKeySet();
        final long firstRefundDelayMs;
        private final CountDownLatch never = new CountDownLatch(1);
        private final AtomicInteger refundCalls = new AtomicInteger();

        Gateway(long firstRefundDelayMs) {
            this.firstRefundDelayMs = firstRefundDelayMs;
            ledgerRefusesOnce.add("A-1002");
        }

        Hold hold(String orderId, long cents) {
            Hold hold = new Hold("H-" + holds.incrementAndGet(), orderId, cents);
            if (ledgerRefusesOnce.remove(orderId)) {
                // the hold is written to the ledger in the call's transaction, whose commit then fails
                TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                    @Override
                    public void beforeCommit(boolean readOnly) {
                        throw new IllegalStateException("the ledger refused to commit hold " + hold.holdId());
                    }
                });
            }
            return hold;
        }

        /** The compensation of hold_funds: the hold is gone from the ledger, so it is released at the gateway. */
        void release(Hold hold) {
            holdsReleased.incrementAndGet();
        }

        Receipt refund(String orderId, long cents) throws InterruptedException {
            if (refundCalls.incrementAndGet() == 1 && firstRefundDelayMs > 0) {
                // a slow gateway: the client's timeout runs out while the money is on its way
                never.await(firstRefundDelayMs, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            int n = refunds.merge(orderId, 1, Integer::sum);
            return new Receipt("R-" + orderId + "-" + n, orderId, cents);
        }
    }

    private RefundServer() {
    }

    public static void main(String[] args) throws Exception {
        String postgres = null;
        long delay = 1500;
        String revision = LEGACY;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--postgres" -> postgres = args[++i];
                case "--gateway-delay-ms" -> delay = Long.parseLong(args[++i]);
                case "--revision" -> revision = args[++i];
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; use --postgres <jdbc url>, --gateway-delay-ms <ms> and --revision " + MODERN);
            }
        }
        if (MODERN.equals(revision)) {
            // stateless: no initialize, each request on its own; the server ends when the client closes stdin
            McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
            new StdioMcpTransport(tools(postgres, new Gateway(delay)).modernServer("refund-server", "0.1.0", json),
                    json).start().block();
            System.exit(0);
        }
        if (!LEGACY.equals(revision)) {
            throw new IllegalArgumentException("--revision " + revision + " is not served; use " + LEGACY + " (the"
                    + " default) or " + MODERN);
        }
        // the transport reads stdin on its own threads; the process lives until the client closes stdin
        CountDownLatch ended = new CountDownLatch(1);
        McpSyncServer server = start(postgres, new Gateway(delay), new FilterInputStream(System.in) {
            @Override
            public int read() throws IOException {
                return ending(super.read());
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                return ending(super.read(buffer, offset, length));
            }

            private int ending(int read) {
                if (read < 0) {
                    ended.countDown();
                }
                return read;
            }
        });
        ended.await();
        server.closeGracefully();
        System.exit(0);
    }

    /** The 2025-11-25 revision: initialize, then tools/list and tools/call in the session. */
    static final String LEGACY = "2025-11-25";
    /** The 2026-07-28 revision: stateless, confirmation by input_required. */
    static final String MODERN = "2026-07-28";

    static McpSyncServer start(String postgresUrl, Gateway gateway, InputStream in) throws SQLException {
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        // the SDK's stdio transport, with requests before initialize answered instead of left waiting
        return McpServer.sync(McpStdioGuard.transport(json, in, System.out))
                .jsonMapper(json)
                .serverInfo("refund-server", "0.1.0")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools(postgresUrl, gateway).specifications())
                .build();
    }

    /** The three tools on the store, whichever revision serves them. */
    static McpIdempotentTools tools(String postgresUrl, Gateway gateway) throws SQLException {
        DataSource dataSource = postgresUrl != null ? new DriverManagerDataSource(postgresUrl)
                : new DriverManagerDataSource("jdbc:h2:mem:refunds;DB_CLOSE_DELAY=-1");
        JdbcDialect dialect = postgresUrl != null ? JdbcDialect.postgresql() : JdbcDialect.h2();
        createTableIfMissing(dataSource, dialect);
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).build();

        String configured = System.getenv("REFUND_AGENT_SECRET");
        byte[] secret = configured != null ? configured.getBytes(StandardCharsets.UTF_8) : new byte[32];
        if (configured == null) {
            new SecureRandom().nextBytes(secret);  // request state then opens in this process only
        }
        // the user answers the question: by elicitation on 2025-11-25, by input_required on 2026-07-28; no token
        McpConfirmations confirmations = McpConfirmations.builder(secret, store).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store)
                .scope(McpIdempotentTools.principalScope())
                .transactions(SpringTransactionBridge.INSTANCE)
                .confirmationGate(confirmations)
                .build();

        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        return McpIdempotentTools.builder(executor).confirmations(confirmations)
                .transaction(call -> transaction.execute(status -> {
                    try {
                        return call.call();
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new UndeclaredThrowableException(e);
                    }
                }))
                .tool(IdempotentTool.builder(
                        IdempotentOperation.builder("Orders.lookup", Tier.READ_ONLY, ResultType.of(Order.class))
                                .build(),
                        OrderArgs.class, a -> new Order(a.orderId(), gateway.orders.getOrDefault(a.orderId(), 0L),
                                gateway.orders.containsKey(a.orderId()) ? "DELIVERED" : "UNKNOWN",
                                gateway.refunds.getOrDefault(a.orderId(), 0), gateway.holdsReleased.get()))
                        .name("lookup_order").description("Look up an order: amount, status, refunds executed")
                        .build())
                .tool(IdempotentTool.builder(
                        IdempotentOperation.builder("Payments.hold", Tier.REVERSIBLE, ResultType.of(Hold.class))
                                .ttl("24h").build(),
                        HoldArgs.class, a -> gateway.hold(a.orderId(), a.cents()))
                        .compensation(gateway::release)
                        .name("hold_funds").description("Hold funds for an order (cancellable)").build())
                .tool(IdempotentTool.builder(
                        IdempotentOperation.builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Receipt.class))
                                .ttl("7d").build(),
                        RefundArgs.class, a -> gateway.refund(a.orderId(), a.cents()))
                        .name("refund").description("Refund an order to the customer; money leaves, once").build())
                .build();
    }

    private static void createTableIfMissing(DataSource dataSource, JdbcDialect dialect) throws SQLException {
        // the table the store will use, as the connection resolves its name (the search path), not one of that
        // name in any schema: JDBC metadata with a null schema would find another schema's table
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.executeQuery("SELECT 1 FROM " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + " WHERE 1 = 0").close();
            return;
        } catch (SQLException missing) {
            // create it below
        }
        try (InputStream in = new ClassPathResource(dialect.schemaLocation()).getInputStream()) {
            new ResourceDatabasePopulator(new ByteArrayResource(in.readAllBytes())).execute(dataSource);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + dialect.schemaLocation(), e);
        }
    }
}
