package dev.idempotency.mcp.boot;

import dev.idempotency.mcp.McpHttpGuard;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
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
    /**
     * The {@code Origin}s served ({@code scheme://host[:port]}, {@code :*} for any port); a request from another is
     * refused with 403, one without {@code Origin} is served. Replaces the default, this machine's pages only.
     */
    private List<String> allowedOrigins = new ArrayList<>(McpHttpGuard.LOCALHOST_ORIGINS);
    /**
     * The {@code Host}s served ({@code host[:port]}, {@code :*} for any port); a request to another is refused with
     * 421. Replaces the default, this machine's names only: list the name clients reach the server by.
     */
    private List<String> allowedHosts = new ArrayList<>(McpHttpGuard.LOCALHOST_HOSTS);
    /**
     * The HMAC key (its UTF-8 bytes, at least 32) that seals the request state of a 2026-07-28 {@code input_required}
     * confirmation: the same on every node, so that a re-sent request opens on any of them. Unless set, a key derived
     * from the {@code McpConfirmations}' secret.
     */
    private @Nullable String requestStateSecret;

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

    public List<String> getAllowedOrigins() {
        return allowedOrigins;
    }

    public void setAllowedOrigins(List<String> allowedOrigins) {
        this.allowedOrigins = allowedOrigins;
    }

    public @Nullable String getRequestStateSecret() {
        return requestStateSecret;
    }

    public void setRequestStateSecret(@Nullable String requestStateSecret) {
        this.requestStateSecret = requestStateSecret;
    }

    public List<String> getAllowedHosts() {
        return allowedHosts;
    }

    public void setAllowedHosts(List<String> allowedHosts) {
        this.allowedHosts = allowedHosts;
    }
}
