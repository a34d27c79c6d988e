package dev.idempotency.mcp;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import tools.jackson.databind.json.JsonMapper;

/**
 * One MCP server with the three {@link RefundTools} on a JDBC store (a table of its own, dropped by {@link #close()}),
 * and the SDK's own clients connected to it in-process, one principal per connection.
 */
final class McpServerFixture implements AutoCloseable {

    static final byte[] SECRET = "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
    static final Duration CONFIRMATION_TTL = Duration.ofMinutes(10);

    final RefundTools tools = new RefundTools();
    final MutableClock clock = new MutableClock(Instant.parse("2026-07-28T10:00:00Z"));
    final WatchedStore store;
    final McpConfirmations confirmations;
    final McpIdempotentTools mcpTools;
    private final DataSource dataSource;
    private final String table;
    private final JdbcDialect dialect;
    private final InMemoryTransport transport;
    private final McpSyncServer server;
    private final List<McpSyncClient> clients = new ArrayList<>();

    McpServerFixture(DataSource dataSource, JdbcDialect dialect) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.table = "idem_mcp_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        String script = script(dialect).replace(JdbcIdempotencyStore.DEFAULT_TABLE_NAME, table);
        new ResourceDatabasePopulator(new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)))
                .execute(dataSource);
        this.store = new WatchedStore(JdbcIdempotencyStore.builder(dataSource).tableName(table).build());
        this.confirmations = McpConfirmations.builder(SECRET, store).tokens(true).ttl(CONFIRMATION_TTL).clock(clock).build();
        IdempotentExecutor executor = IdempotentExecutor.builder(store)
                .scope(McpIdempotentTools.principalScope())
                .confirmationGate(confirmations)
                .build();
        this.mcpTools = McpIdempotentTools.builder(executor).confirmations(confirmations)
                .tool(tools.lookupOrder).tool(tools.holdFunds).tool(tools.refund).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        this.transport = new InMemoryTransport(json);
        this.server = McpServer.sync(transport).jsonMapper(json).serverInfo("refund-test", "1")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcpTools.specifications()).build();
    }

    /** A client of {@code principal}, without elicitation. */
    McpSyncClient client(String principal) {
        return client(principal, null);
    }

    /** A client of {@code principal}; with {@code elicitation}, it declares the capability and answers with it. */
    McpSyncClient client(String principal,
            @Nullable Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> elicitation) {
        return client(principal, elicitation, Duration.ofSeconds(30));
    }

    /** A client of {@code principal} that gives up on a request after {@code timeout}. */
    McpSyncClient client(String principal,
            @Nullable Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> elicitation, Duration timeout) {
        McpSyncClient client = connect(transport, principal, elicitation, timeout);
        clients.add(client);
        return client;
    }

    /** An initialized client of {@code principal} on {@code transport}, answering elicitations when given. */
    static McpSyncClient connect(InMemoryTransport transport, String principal,
            @Nullable Function<McpSchema.ElicitFormRequest, McpSchema.ElicitResult> elicitation, Duration timeout) {
        McpClient.SyncSpec spec = McpClient.sync(transport.client(
                        McpTransportContext.create(Map.of(McpMeta.PRINCIPAL, principal))))
                .requestTimeout(timeout).initializationTimeout(Duration.ofSeconds(30));
        if (elicitation != null) {
            spec.capabilities(McpSchema.ClientCapabilities.builder().elicitation().build()).elicitation(elicitation);
        }
        McpSyncClient client = spec.build();
        client.initialize();
        return client;
    }

    @Override
    public void close() {
        clients.forEach(McpSyncClient::closeGracefully);
        server.closeGracefully();
        dropTable(new JdbcTemplate(dataSource), dialect, table);
    }

    /** Drops a table made from the dialect's script, and what the script made beside it. */
    static void dropTable(JdbcTemplate jdbc, JdbcDialect dialect, String table) {
        dialect.dropStatements(table).forEach(jdbc::execute);
    }

    /** The dialect's schema script, as shipped. */
    static String script(JdbcDialect dialect) {
        try (InputStream in = new ClassPathResource(dialect.schemaLocation()).getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + dialect.schemaLocation(), e);
        }
    }

    /** A clock the test moves. */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
