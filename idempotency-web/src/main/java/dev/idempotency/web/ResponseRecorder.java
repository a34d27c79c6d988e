package dev.idempotency.web;

import dev.idempotency.IdempotencyReplayException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.ModelAndView;

/**
 * Records a first response and replays it: runs the handler (through Spring MVC's adapter) into a
 * {@link CappedResponse}, keeps its status, allow-listed headers and body as a {@link RecordedResponse}, and sends a
 * recorded one back, read as untrusted input.
 */
final class ResponseRecorder {

    private final HandlerAdapter delegate;
    private final List<String> replayedHeaders;
    private final String replayedHeader;
    private final boolean recordServerErrors;
    private final int maxResponseSize;

    ResponseRecorder(HandlerAdapter delegate, List<String> replayedHeaders, String replayedHeader,
            boolean recordServerErrors, int maxResponseSize) {
        this.delegate = delegate;
        this.replayedHeaders = replayedHeaders;
        this.replayedHeader = replayedHeader;
        this.recordServerErrors = recordServerErrors;
        this.maxResponseSize = maxResponseSize;
    }

    /**
     * The engine's bound on a recorded response ({@code IdempotentOperation.maxResultBytes}, checked as for any
     * result) for a body of at most {@code maxResponseSize} bytes: the body in base64, as the JSON codec writes
     * bytes, and 64 KiB for the status and the allow-listed headers.
     */
    static int recordedBytes(int maxResponseSize) {
        return (int) Math.min(Integer.MAX_VALUE, 4L * ((maxResponseSize + 2L) / 3) + (64 << 10));
    }

    /**
     * Runs the handler into the capturing response and returns what is recorded of it.
     *
     * @throws ServerError       for a 5xx, unless server errors are recorded
     * @throws ResponseTooLarge  for a body over the limit
     */
    RecordedResponse record(HttpServletRequest request, CappedResponse capture, HandlerMethod method)
            throws Exception {
        ModelAndView view = delegate.handle(request, capture, method);
        if (view != null || request.isAsyncStarted()) {
            throw new IllegalStateException(HandlerDescriptor.describe(method) + " did not write its response in the call (a view or an "
                    + "asynchronous result): an @IdempotentRequest method must return a body or a ResponseEntity");
        }
        if (capture.overflowed()) {
            // thrown through the engine as a result it cannot record is: the transaction rolls back, a reversible
            // key is released, an irreversible one held for review; the response, cut short, is not sent
            throw new ResponseTooLarge(HandlerDescriptor.describe(method) + ": the response body is larger than the "
                    + maxResponseSize + " bytes an idempotent request records (idempotency.web.max-response-size); "
                    + "it was not sent and nothing was recorded. Return less (an id to fetch the rest by), or raise "
                    + "the limit");
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            if (name.equalsIgnoreCase("Content-Type")) {
                String type = capture.getContentType();
                if (type != null) {
                    headers.put(name, List.of(type));
                }
            } else {
                Collection<String> value = capture.getHeaders(name);
                if (value != null && !value.isEmpty()) {
                    headers.put(name, List.copyOf(value));
                }
            }
        }
        RecordedResponse response = new RecordedResponse(capture.getStatus(), headers, capture.getContentAsByteArray());
        if (response.status() >= 500 && !recordServerErrors) {
            throw new ServerError();
        }
        return response;
    }

    /**
     * Sends a recorded response. The record is read as untrusted input (a store row or a shared pre-filter someone
     * else can write): only the headers the allow-list names are sent, whatever else it holds, and a status no
     * final response can have, or a header value with a control character, makes it unreadable (nothing is sent).
     *
     * @throws IdempotencyReplayException if the record cannot be sent
     */
    void replay(HttpServletResponse response, RecordedResponse recorded) throws IOException {
        if (recorded.headers() == null || recorded.body() == null) {
            throw new IdempotencyReplayException("the recorded response has no headers or no body");
        }
        if (recorded.status() < 200 || recorded.status() > 599) {
            throw new IdempotencyReplayException("the recorded response has the status " + recorded.status()
                    + ", which no final HTTP response has");
        }
        Map<String, List<String>> allowed = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            recorded.headers().forEach((recordedName, values) -> {
                if (recordedName.equalsIgnoreCase(name) && values != null) {
                    for (String value : values) {
                        if (value == null || !isFieldValue(value)) {
                            throw new IdempotencyReplayException("the recorded response's " + name
                                    + " header holds a character a header value cannot carry");
                        }
                        allowed.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
                    }
                }
            });
        }
        response.setStatus(recorded.status());
        allowed.forEach((name, values) -> {
            if (name.equalsIgnoreCase("Content-Type")) {
                response.setContentType(values.get(0));
            } else {
                values.forEach(value -> response.addHeader(name, value));
            }
        });
        response.setHeader(replayedHeader, "true");
        response.setContentLength(recorded.body().length);
        response.getOutputStream().write(recorded.body());
    }

    /** Whether {@code value} holds no control character but tabs (RFC 9110 field-value): no CR, LF or DEL. */
    private static boolean isFieldValue(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return false;
            }
        }
        return true;
    }

    /** A response larger than the limit: thrown through the engine, which handles it as an unrecordable result. */
    static final class ResponseTooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ResponseTooLarge(String message) {
            super(message, null, false, false);
        }
    }

    /** A 5xx response, not recorded: thrown through the engine so that it releases the key. */
    static final class ServerError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ServerError() {
            super("a 5xx response is not recorded", null, false, false);
        }
    }
}
