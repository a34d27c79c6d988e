package dev.idempotency.mcp;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.startup.Tomcat;
import tools.jackson.databind.json.JsonMapper;

/**
 * One tool on an in-memory store, keys scoped to the principal, served by the SDK's streamable HTTP servlet transport
 * (servlet {@code mcp} at {@code /mcp}) on an embedded Tomcat on a free port.
 */
final class TomcatMcpServer implements AutoCloseable {

    final String url;
    private final Tomcat tomcat;
    private final McpSyncServer server;

    /**
     * @param transport the test's settings of the transport's builder (its JSON mapper and endpoint are set)
     * @param context the test's additions to the Tomcat context (filters, servlets) before it starts
     */
    TomcatMcpServer(Path base, IdempotentTool<?, ?> tool,
            UnaryOperator<HttpServletStreamableServerTransportProvider.Builder> transport, Consumer<Context> context)
            throws Exception {
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore())
                .scope(McpIdempotentTools.principalScope()).build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(executor).tool(tool).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        HttpServletStreamableServerTransportProvider provider = transport.apply(
                HttpServletStreamableServerTransportProvider.builder().jsonMapper(json).mcpEndpoint("/mcp")).build();
        server = McpServer.sync(provider).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcp.specifications()).build();

        tomcat = start(base, provider, context);
        url = "http://localhost:" + tomcat.getConnector().getLocalPort();
    }

    /** A started Tomcat on a free port serving {@code servlet} (named {@code mcp}, asynchronous) at {@code /mcp}. */
    static Tomcat start(Path base, HttpServlet servlet, Consumer<Context> context) throws Exception {
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        tomcat.setPort(0);
        Context tomcatContext = tomcat.addContext("", base.toString());
        Wrapper wrapper = Tomcat.addServlet(tomcatContext, "mcp", servlet);
        wrapper.setAsyncSupported(true);
        tomcatContext.addServletMappingDecoded("/mcp", "mcp");
        context.accept(tomcatContext);
        tomcat.getConnector();
        tomcat.start();
        return tomcat;
    }

    @Override
    public void close() throws org.apache.catalina.LifecycleException {
        server.close();
        tomcat.stop();
        tomcat.destroy();
    }
}
