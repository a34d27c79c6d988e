package dev.idempotency.mcp;

import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;

/**
 * One MCP endpoint for both eras: a request with an {@code Mcp-Method} header (every 2026-07-28 request has one, no
 * 2025-11-25 request does) goes to the 2026-07-28 servlet (the SDK's {@code HttpServletMcpTransport}), every other
 * request to the 2025-11-25 servlet (its {@code HttpServletStreamableServerTransportProvider}). Register it with
 * asynchronous support, like the servlets it serves, and {@link McpHttpGuard} in front of it:
 *
 * <pre>{@code
 * HttpServlet both = new McpHttpEras(legacyTransport, HttpServletMcpTransport.builder(tools.modernServer(...))
 *         .httpHeaderValidator(ServerTransportSecurityValidator.toHttpHeaderValidator(validator)).build());
 * }</pre>
 */
public class McpHttpEras extends HttpServlet {

    private static final long serialVersionUID = 1L;
    /** The header every 2026-07-28 request carries over HTTP. */
    static final String MCP_METHOD = "Mcp-Method";

    private final transient HttpServlet legacy;
    private final transient HttpServlet modern;

    /**
     * @param legacy the 2025-11-25 servlet
     * @param modern the 2026-07-28 servlet
     */
    public McpHttpEras(HttpServlet legacy, HttpServlet modern) {
        this.legacy = Objects.requireNonNull(legacy, "legacy");
        this.modern = Objects.requireNonNull(modern, "modern");
    }

    @Override
    public void init(ServletConfig config) throws ServletException {
        super.init(config);
        legacy.init(config);
        modern.init(config);
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        (request.getHeader(MCP_METHOD) != null ? modern : legacy).service(request, response);
    }

    @Override
    public void destroy() {
        legacy.destroy();
        modern.destroy();
        super.destroy();
    }
}
