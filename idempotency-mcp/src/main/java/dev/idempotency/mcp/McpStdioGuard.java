package dev.idempotency.mcp;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The SDK's 2025-11-25 stdio transport, answering the requests it would leave unanswered: a request sent before
 * {@code initialize} (other than {@code ping}) waits in the SDK for a session that never comes, so the client hangs
 * until its own timeout. Through this guard it gets a JSON-RPC error at once, code {@value #NOT_INITIALIZED}
 * (Invalid Request), naming the method and the missing {@code initialize}; a {@code ping} gets its empty result, as the
 * revision allows pings before the handshake. A request that claims a 2026-07-28 protocol version in its {@code _meta}
 * gets the same error, which tells a client that speaks both revisions to fall back to {@code initialize} (any error
 * but {@code UnsupportedProtocolVersionError} does); its {@code server/discover} probe passes to the SDK, which
 * answers Method not found at once. From {@code initialize} on, every byte passes through untouched.
 *
 * <pre>{@code
 * McpServer.sync(McpStdioGuard.transport(jsonMapper, System.in, System.out))
 *         .jsonMapper(jsonMapper).tools(tools.specifications()).build();
 * }</pre>
 *
 * <p>The 2026-07-28 stdio transport ({@code StdioMcpTransport}) has no handshake and needs no guard.
 */
public final class McpStdioGuard {

    /** The JSON-RPC error code of a request before {@code initialize}: Invalid Request. */
    public static final int NOT_INITIALIZED = -32600;
    /** Longer lines are not inspected (they pass to the SDK, which applies its own limit). */
    private static final int MAX_INSPECTED = 1 << 20;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** The probe of a client that speaks both revisions. */
    private static final String DISCOVER = "server/discover";

    private McpStdioGuard() {
    }

    /**
     * The SDK's {@link StdioServerTransportProvider} on {@code in} and {@code out}, guarded.
     *
     * @param json the SDK's JSON mapper
     * @param in   where the client's messages come from ({@code System.in})
     * @param out  where the answers go ({@code System.out}); the guard's answers are written whole, under the lock the
     *             SDK writes its own lines under
     */
    public static StdioServerTransportProvider transport(McpJsonMapper json, InputStream in, OutputStream out) {
        Objects.requireNonNull(json, "json");
        return new StdioServerTransportProvider(json, new GuardedInput(Objects.requireNonNull(in, "in"),
                Objects.requireNonNull(out, "out")), out);
    }

    /** The input the SDK reads: line by line until {@code initialize}, answering what comes before; then raw. */
    static final class GuardedInput extends InputStream {
        private final InputStream in;
        private final OutputStream out;
        private byte[] pending = new byte[0];
        private int position;
        private volatile boolean initialized;

        GuardedInput(InputStream in, OutputStream out) {
            this.in = new BufferedInputStream(in);
            this.out = out;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            Objects.checkFromIndexSize(offset, length, buffer.length);
            if (length == 0) {
                return 0;
            }
            while (position == pending.length) {
                if (initialized) {
                    return in.read(buffer, offset, length);
                }
                byte[] line = nextLine();
                if (line == null) {
                    return -1;
                }
                if (pass(line)) {
                    pending = line;
                    position = 0;
                }
            }
            int n = Math.min(length, pending.length - position);
            System.arraycopy(pending, position, buffer, offset, n);
            position += n;
            return n;
        }

        @Override
        public int available() throws IOException {
            return pending.length - position;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }

        /** The next line with its line feed, or what is left before the end of input; null at the end. */
        private byte @Nullable [] nextLine() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                line.write(b);
                if (b == '\n') {
                    break;
                }
            }
            return line.size() == 0 ? null : line.toByteArray();
        }

        /** Whether the SDK gets this line; false when the guard answered it. */
        private boolean pass(byte[] line) throws IOException {
            if (line.length > MAX_INSPECTED) {
                return true;
            }
            JsonNode message;
            try {
                message = JSON.readTree(line);
            } catch (JacksonException notJson) {
                return true;  // the SDK answers what it cannot parse
            }
            if (message == null || !message.isObject() || !message.path("method").isString()
                    || !message.has("id") || message.get("id").isNull()) {
                return true;  // a notification or a response: nothing to answer
            }
            String method = message.get("method").asString();
            if ("initialize".equals(method)) {
                initialized = true;
                return true;
            }
            if (DISCOVER.equals(method)) {
                return true;  // the SDK answers it at once: Method not found, a 2026-07-28 client's cue to initialize
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("jsonrpc", "2.0");
            answer.put("id", JSON.treeToValue(message.get("id"), Object.class));
            if ("ping".equals(method)) {
                answer.put("result", Map.of());
            } else {
                JsonNode version = message.path("params").path("_meta").path("io.modelcontextprotocol/protocolVersion");
                Map<String, Object> error = new LinkedHashMap<>();
                error.put("code", NOT_INITIALIZED);
                error.put("message", method + " before initialize: this server speaks MCP 2025-11-25 over stdio,"
                        + " where a session starts with an initialize request and the notifications/initialized"
                        + " notification; send them first" + (version.isString() ? " (protocol version "
                        + version.asString() + " in _meta is not served here)" : ""));
                answer.put("error", error);
            }
            byte[] bytes = (JSON.writeValueAsString(answer) + "\n").getBytes(StandardCharsets.UTF_8);
            synchronized (out) {  // the lock the SDK writes its lines under
                out.write(bytes);
                out.flush();
            }
            return false;
        }
    }
}
