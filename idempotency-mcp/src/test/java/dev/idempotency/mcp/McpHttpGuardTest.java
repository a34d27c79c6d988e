package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelcontextprotocol.server.transport.ServerTransportSecurityException;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityValidator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The allow-lists {@link McpHttpGuard#validator} accepts: an entry no {@code Origin} or {@code Host} header can ever
 * match (a path, a trailing slash, upper case) is refused when the server is built, naming the entry, rather than
 * refusing every client later. Over HTTP: {@code McpHttpDoorTest}.
 */
@SuppressWarnings("deprecation") // the SDK's Origin/Host validator, deprecated in 2.2.0 with no replacement
class McpHttpGuardTest {

    private static void validate(ServerTransportSecurityValidator validator, String origin, String host)
            throws ServerTransportSecurityException {
        validator.validateHeaders(Map.of("Origin", List.of(origin), "Host", List.of(host)));
    }

    @Test
    void theLocalhostDefaultsServeThisMachineOnAnyPortAndNothingElse() {
        ServerTransportSecurityValidator validator =
                McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS, McpHttpGuard.LOCALHOST_HOSTS);

        assertThatCode(() -> validate(validator, "http://localhost:5173", "localhost:8080")).doesNotThrowAnyException();
        assertThatCode(() -> validate(validator, "https://[::1]:8443", "[::1]:8443")).doesNotThrowAnyException();
        assertThatCode(() -> validate(validator, "http://127.0.0.1", "127.0.0.1")).doesNotThrowAnyException();
        assertThatThrownBy(() -> validate(validator, "http://localhost.evil.example", "localhost:8080"))
                .isInstanceOfSatisfying(ServerTransportSecurityException.class,
                        e -> assertThat(e.getStatusCode()).isEqualTo(403));
        assertThatThrownBy(() -> validate(validator, "http://localhost:8080", "evil.example:8080"))
                .isInstanceOfSatisfying(ServerTransportSecurityException.class,
                        e -> assertThat(e.getStatusCode()).isEqualTo(421));
    }

    @Test
    void anOriginWithAPathOrATrailingSlashIsRefusedByName() {
        assertThatThrownBy(() -> McpHttpGuard.validator(List.of("https://agent.example.com/"),
                McpHttpGuard.LOCALHOST_HOSTS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"https://agent.example.com/\"");
        assertThatThrownBy(() -> McpHttpGuard.validator(List.of("agent.example.com"), McpHttpGuard.LOCALHOST_HOSTS))
                .hasMessageContaining("\"agent.example.com\"").hasMessageContaining("scheme://host");
    }

    @Test
    void aHostWithASchemeOrUpperCaseIsRefusedByName() {
        assertThatThrownBy(() -> McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS,
                List.of("http://mcp.example.com"))).hasMessageContaining("\"http://mcp.example.com\"");
        assertThatThrownBy(() -> McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS, List.of("MCP.example.com")))
                .hasMessageContaining("\"MCP.example.com\"").hasMessageContaining("lower case");
    }

    @Test
    void anEmptyListIsRefusedRatherThanCheckingNothing() {
        // the SDK checks no Host at all when its list is empty
        assertThatThrownBy(() -> McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS, List.of()))
                .hasMessageContaining("allowed hosts are empty");
        assertThatThrownBy(() -> McpHttpGuard.validator(List.of(), McpHttpGuard.LOCALHOST_HOSTS))
                .hasMessageContaining("allowed origins are empty");
    }

    @Test
    void theErrorBodyNeverCarriesTheTransportsOwnText() {
        assertThat(McpHttpGuard.errorBody(400, "Invalid message format: Cannot deserialize value of type "
                + "`io.modelcontextprotocol.spec.McpSchema$JSONRPCRequest`", null))
                .isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                        + "\"message\":\"Parse error: the body is not a JSON-RPC message\"}}");
        assertThat(McpHttpGuard.errorBody(400, "Session not found: <script>", null)).doesNotContain("script")
                .contains("\"code\":-32600", "\"message\":\"Bad request\"");
        assertThat(McpHttpGuard.errorBody(500, "java.lang.NullPointerException", null)).doesNotContain("java")
                .contains("\"code\":-32603");
    }
}
