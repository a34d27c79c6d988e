package dev.idempotency.mcp.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code idempotency.mcp.*}: the MCP tools over HTTP in a Spring Boot application; see {@code docs/mcp.md}. */
@ConfigurationProperties("idempotency.mcp")
public class IdempotencyMcpProperties {

    /** Whether the @McpTool beans are served over the SDK's streamable HTTP servlet transport (off unless set). */
    private boolean enabled;
    /** The path the MCP endpoint is served at. */
    private String endpoint = "/mcp";
    /** The server name in the MCP handshake. */
    private String serverName = "idempotency-mcp";
    /** The server version in the MCP handshake. */
    private String serverVersion = "1.0.0";

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getEndpoint() {
        return endpoint;
    }

    public void setEndpoint(String endpoint) {
        this.endpoint = endpoint;
    }

    public String getServerName() {
        return serverName;
    }

    public void setServerName(String serverName) {
        this.serverName = serverName;
    }

    public String getServerVersion() {
        return serverVersion;
    }

    public void setServerVersion(String serverVersion) {
        this.serverVersion = serverVersion;
    }
}
