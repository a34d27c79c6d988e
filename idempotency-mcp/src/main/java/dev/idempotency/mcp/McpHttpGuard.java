package dev.idempotency.mcp;

import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityValidator;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The HTTP door of the SDK's streamable HTTP servlet transport ({@link HttpServletStreamableServerTransportProvider}),
 * in two parts; the Spring Boot auto-configuration sets up both (see {@code docs/mcp.md}).
 * <ul>
 * <li>{@link #validator(List, List)}: the SDK's own {@link DefaultServerTransportSecurityValidator} for the
 * transport builder's {@code securityValidator(...)}, after checking the allow-lists. A request whose {@code Origin}
 * is not allowed is refused with 403, one whose {@code Host} is not allowed (or missing) with 421; a request without
 * {@code Origin} (not from a browser) is served when its {@code Host} is allowed. This is the defence against DNS
 * rebinding: a page on a foreign site that resolves its name to the server's address sends its own name as
 * {@code Host} and its own origin as {@code Origin}.</li>
 * <li>The {@link Filter}: in front of the MCP servlet only (asynchronous support on, as the servlet's), it answers
 * every error of the transport (refused {@code Origin} or {@code Host}, a body that is not JSON-RPC, a missing or
 * unknown session, another HTTP method or content type, an exception) as a JSON-RPC error object
 * {@code {"jsonrpc":"2.0","id":...,"error":{"code":...,"message":...}}} with the transport's HTTP status (the id
 * of the request when the transport read one with an id, else {@code null}). The SDK
 * itself answers some with its Java exception serialized (class names, stack trace) and others with the
 * container's error page; the filter answers them with a message of its own, never the exception's.</li>
 * </ul>
 * Without Spring Boot:
 * <pre>{@code
 * HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider.builder()
 *         .securityValidator(McpHttpGuard.validator(McpHttpGuard.LOCALHOST_ORIGINS, McpHttpGuard.LOCALHOST_HOSTS))
 *         ...build();
 * Wrapper servlet = Tomcat.addServlet(context, "mcp", transport);
 * servlet.setAsyncSupported(true);
 * context.addServletMappingDecoded("/mcp", "mcp");
 * FilterDef guard = new FilterDef();
 * guard.setFilterName("mcpGuard");
 * guard.setFilter(new McpHttpGuard());
 * guard.setAsyncSupported("true");
 * context.addFilterDef(guard);
 * FilterMap map = new FilterMap();
 * map.setFilterName("mcpGuard");
 * map.addServletName("mcp");
 * context.addFilterMap(map);
 * }</pre>
 */
public final class McpHttpGuard implements Filter {

    /** The origins of pages served from this machine, any port: {@code http(s)://localhost}, 127.0.0.1, [::1]. */
    public static final List<String> LOCALHOST_ORIGINS = List.of("http://localhost:*", "https://localhost:*",
            "http://127.0.0.1:*", "https://127.0.0.1:*", "http://[::1]:*", "https://[::1]:*");
    /** The names of this machine as a {@code Host} header, any port: localhost, 127.0.0.1, [::1]. */
    public static final List<String> LOCALHOST_HOSTS = List.of("localhost:*", "127.0.0.1:*", "[::1]:*");

    private static final System.Logger LOG = System.getLogger(McpHttpGuard.class.getName());
    /** A lower-case host name or address, IPv6 in brackets, then an optional port or {@code :*}. */
    private static final String HOST_PORT = "([^\\sA-Z/?#@:*\\[\\]]+|\\[[0-9a-f:.]+\\])(:(\\d+|\\*))?";
    private static final Pattern ORIGIN = Pattern.compile("[a-z][a-z0-9+.-]*://" + HOST_PORT);
    private static final Pattern HOST = Pattern.compile(HOST_PORT);
    private static final JsonMapper JSON = JsonMapper.shared();
    /** The bytes of a request body kept to find its id in: a message's id comes first in any real client's. */
    private static final int ID_SEARCH_BYTES = 64 * 1024;

    /** JSON-RPC's codes (and the -32001 of the SDKs for an unknown session). */
    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int INTERNAL_ERROR = -32603;
    static final int SERVER_ERROR = -32000;
    static final int SESSION_NOT_FOUND = -32001;

    /** The SDK's messages that say what was wrong without a word of the request or of Java: passed on. */
    private static final Set<String> SDK_MESSAGES = Set.of(
            "Session ID required in mcp-session-id header",
            "text/event-stream required in Accept header",
            "application/json required in Accept header");
    private static final String SDK_PARSE_ERROR = "Invalid message format";

    /** A filter to put in front of the MCP servlet; it holds no state. */
    public McpHttpGuard() {
    }

    /**
     * The SDK's Origin and Host validator over these allow-lists, for
     * {@code HttpServletStreamableServerTransportProvider.Builder.securityValidator(...)}. Each entry is matched
     * exactly as written (the header as the client sent it), or with any port when it ends in {@code :*}.
     *
     * @param allowedOrigins {@code scheme://host}, {@code scheme://host:port} or {@code scheme://host:*}, lower case,
     *        no path (an {@code Origin} header never has one); a request without {@code Origin} is not checked
     * @param allowedHosts {@code host}, {@code host:port} or {@code host:*}, lower case, IPv6 in brackets
     * @return the validator
     * @throws IllegalArgumentException naming the entry, for an empty list or an entry that no header can match
     */
    // the SDK's Origin/Host hook of its servlet transports: deprecated in 2.2.0 with no replacement for them yet
    @SuppressWarnings("deprecation")
    public static ServerTransportSecurityValidator validator(List<String> allowedOrigins, List<String> allowedHosts) {
        return DefaultServerTransportSecurityValidator.builder()
                .allowedOrigins(checked("origin", allowedOrigins, ORIGIN, "scheme://host, scheme://host:port or "
                        + "scheme://host:*"))
                .allowedHosts(checked("host", allowedHosts, HOST, "host, host:port or host:*"))
                .build();
    }

    private static List<String> checked(String what, List<String> entries, Pattern form, String forms) {
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("the allowed " + what + "s are empty: list at least one ("
                    + "for this machine only: " + (what.equals("host") ? LOCALHOST_HOSTS : LOCALHOST_ORIGINS) + ")");
        }
        for (String entry : entries) {
            if (entry == null || !form.matcher(entry).matches()) {
                throw new IllegalArgumentException("allowed " + what + " \"" + entry + "\" is not " + forms
                        + " (lower case, no path, no trailing slash)");
            }
        }
        return List.copyOf(entries);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (!(request instanceof HttpServletRequest httpRequest) || !(response instanceof HttpServletResponse http)) {
            chain.doFilter(request, response);
            return;
        }
        BodyCopy body = new BodyCopy(httpRequest);
        ErrorCapture capture = new ErrorCapture(http, body);
        try {
            chain.doFilter(body, capture);
        } catch (IOException | ServletException | RuntimeException e) {
            if (http.isCommitted()) {
                throw e;
            }
            LOG.log(System.Logger.Level.ERROR, "the MCP transport failed", e);
            capture.error(HttpServletResponse.SC_INTERNAL_SERVER_ERROR, null);
        } finally {
            capture.done();
        }
    }

    /** A JSON-RPC error: its code and the library's message. */
    private record Answer(int code, String message) {
    }

    private static final Map<Integer, Answer> ANSWERS = Map.of(
            403, new Answer(SERVER_ERROR, "Forbidden: this Origin is not allowed"),
            404, new Answer(SESSION_NOT_FOUND, "Session not found"),
            405, new Answer(SERVER_ERROR, "Method not allowed: POST, GET or DELETE"),
            413, new Answer(SERVER_ERROR, "Request too large"),
            415, new Answer(INVALID_REQUEST, "Unsupported media type: the body must be application/json"),
            421, new Answer(SERVER_ERROR, "Misdirected request: this Host is not allowed"),
            503, new Answer(SERVER_ERROR, "Service unavailable"));
    private static final Answer INTERNAL = new Answer(INTERNAL_ERROR, "Internal error");
    private static final Answer REFUSED = new Answer(SERVER_ERROR, "Request refused");

    /**
     * The JSON-RPC error object for an HTTP error of the transport, its message never the request's or Java's.
     *
     * @param id the request's id (a string or an integer), or null when it has none or cannot be read
     */
    static String errorBody(int status, @Nullable String sdkMessage, @Nullable JsonNode id) {
        Answer answer;
        if (status == 400 && sdkMessage != null && sdkMessage.startsWith(SDK_PARSE_ERROR)) {
            answer = new Answer(PARSE_ERROR, "Parse error: the body is not a JSON-RPC message");
        } else if (status == 400) {
            answer = new Answer(INVALID_REQUEST,
                    sdkMessage != null && SDK_MESSAGES.containsAll(Arrays.asList(sdkMessage.split("; ")))
                            ? "Bad request: " + sdkMessage : "Bad request");
        } else {
            answer = ANSWERS.getOrDefault(status, status >= 500 ? INTERNAL : REFUSED);
        }
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", answer.code());
        error.put("message", answer.message());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", "2.0");
        body.put("id", id);
        body.put("error", error);
        return JSON.writeValueAsString(body);
    }

    /**
     * The response while the transport handles the request: an error status, sent or set, switches it to capturing
     * (the transport's body is kept aside, never sent) and {@link #done()} answers the error as JSON-RPC. Everything
     * else goes through; once the filter has returned (an answer streamed asynchronously), everything does.
     */
    private static final class ErrorCapture extends HttpServletResponseWrapper {
        private final HttpServletResponse http;
        private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        private int errorStatus;
        private @Nullable String errorMessage;
        private boolean done;
        private @Nullable PrintWriter writer;
        private @Nullable ServletOutputStream stream;
        private boolean writerPassedOn;

        private final BodyCopy body;

        ErrorCapture(HttpServletResponse http, BodyCopy body) {
            super(http);
            this.http = http;
            this.body = body;
        }

        private boolean capturing() {
            return errorStatus != 0 && !done;
        }

        void error(int status, @Nullable String message) {
            errorStatus = status;
            errorMessage = message;
        }

        @Override
        public void sendError(int sc, String msg) throws IOException {
            if (done || http.isCommitted()) {
                super.sendError(sc, msg);
            } else {
                error(sc, msg);
            }
        }

        @Override
        public void sendError(int sc) throws IOException {
            if (done || http.isCommitted()) {
                super.sendError(sc);
            } else {
                error(sc, null);
            }
        }

        @Override
        public void setStatus(int sc) {
            if (sc >= 400 && !done && !http.isCommitted()) {
                error(sc, null);
            } else {
                super.setStatus(sc);
            }
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (!capturing()) {
                writerPassedOn = true;
                return super.getWriter();
            }
            if (writer == null) {
                writer = new PrintWriter(new OutputStreamWriter(captured, StandardCharsets.UTF_8));
            }
            return writer;
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (!capturing()) {
                return super.getOutputStream();
            }
            if (stream == null) {
                stream = new ServletOutputStream() {
                    @Override
                    public void write(int b) {
                        captured.write(b);
                    }

                    @Override
                    public boolean isReady() {
                        return true;
                    }

                    @Override
                    public void setWriteListener(WriteListener listener) {
                        throw new UnsupportedOperationException("an error answer is written at once");
                    }
                };
            }
            return stream;
        }

        @Override
        public void flushBuffer() throws IOException {
            if (!capturing()) {
                super.flushBuffer();
            }
        }

        /** The filter has returned: an error captured is answered now; from here on, everything goes through. */
        void done() throws IOException {
            if (errorStatus == 0 || done) {
                done = true;
                return;
            }
            done = true;
            if (http.isCommitted()) {
                return;
            }
            http.resetBuffer();
            http.setStatus(errorStatus);
            http.setContentType("application/json");
            http.setCharacterEncoding(StandardCharsets.UTF_8.name());
            byte[] answer = errorBody(errorStatus, errorMessage != null ? errorMessage : sdkMessage(), body.id())
                    .getBytes(StandardCharsets.UTF_8);
            http.setContentLength(answer.length);
            if (writerPassedOn) {  // the transport took the writer before its error: the stream is not available
                http.getWriter().write(new String(answer, StandardCharsets.UTF_8));
            } else {
                http.getOutputStream().write(answer);
            }
            http.flushBuffer();
        }

        /** The message of the SDK's serialized {@code McpError}, if that is what it wrote. */
        private @Nullable String sdkMessage() {
            if (writer != null) {
                writer.flush();
            }
            if (captured.size() == 0) {
                return null;
            }
            try {
                JsonNode message = JSON.readTree(captured.toByteArray()).path("jsonRpcError").path("message");
                return message.isString() ? message.asString() : null;
            } catch (JacksonException notJson) {
                return null;
            }
        }
    }

    /** The request, whose body's first bytes are kept as the transport reads them, to answer an error with its id. */
    private static final class BodyCopy extends HttpServletRequestWrapper {
        private final ByteArrayOutputStream copy = new ByteArrayOutputStream();
        private @Nullable ServletInputStream stream;

        BodyCopy(HttpServletRequest request) {
            super(request);
        }

        private void keep(byte[] bytes, int offset, int length) {
            copy.write(bytes, offset, Math.max(0, Math.min(length, ID_SEARCH_BYTES - copy.size())));
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (stream == null) {
                ServletInputStream in = super.getInputStream();
                stream = new ServletInputStream() {
                    @Override
                    public int read() throws IOException {
                        int b = in.read();
                        if (b >= 0) {
                            keep(new byte[] {(byte) b}, 0, 1);
                        }
                        return b;
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        int n = in.read(b, off, len);
                        if (n > 0) {
                            keep(b, off, n);
                        }
                        return n;
                    }

                    @Override
                    public boolean isFinished() {
                        return in.isFinished();
                    }

                    @Override
                    public boolean isReady() {
                        return in.isReady();
                    }

                    @Override
                    public void setReadListener(ReadListener listener) {
                        in.setReadListener(listener);
                    }
                };
            }
            return stream;
        }

        /** The id of the request the transport read, if it read one whole with a string or integer id. */
        @Nullable JsonNode id() {
            if (copy.size() == 0 || copy.size() >= ID_SEARCH_BYTES) {
                return null;
            }
            try {
                JsonNode id = JSON.readTree(copy.toByteArray()).path("id");
                return id.isString() || id.isIntegralNumber() ? id : null;
            } catch (JacksonException notJson) {
                return null;
            }
        }
    }
}
