package dev.idempotency.web;

import java.io.IOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import tools.jackson.databind.json.JsonMapper;

/**
 * Tomcat's error report, as RFC 9457 problem details instead of its HTML page: for what Tomcat refuses before the
 * application sees the request (a header larger than {@code server.max-http-request-header-size}, a control
 * character in a header, a malformed request line), where no error page of the application applies. It writes
 * only where nothing was written (an error the application's own error handling answered is left as it is), and
 * never a stack trace, a server name or the refused input.
 *
 * <p>Spring Boot installs it on its embedded Tomcat ({@code idempotency.web.container-errors-as-problems}, on by
 * default). An embedded Tomcat of your own takes it as its host's error report valve, before it starts:
 * {@code ((StandardHost) tomcat.getHost()).setErrorReportValveClass(ProblemDetailsErrorReportValve.class.getName())}.
 */
public final class ProblemDetailsErrorReportValve extends ErrorReportValve {

    /** A valve; Tomcat makes one by its class name. */
    public ProblemDetailsErrorReportValve() {
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Override
    protected void report(Request request, Response response, @Nullable Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        AtomicBoolean ioAllowed = new AtomicBoolean();
        response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
        if (!ioAllowed.get()) {
            return;
        }
        HttpStatus known = HttpStatus.resolve(status);
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", known == null ? "Error" : known.getReasonPhrase());
        problem.put("status", status);
        problem.put("detail", status == 400
                ? "the server refused the request before the application saw it: a header larger than the server "
                        + "accepts, a character a header cannot carry, or a malformed request line"
                : "the server refused the request before the application saw it");
        try {
            response.setContentType("application/problem+json");
            response.setCharacterEncoding("utf-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write(JSON.writeValueAsString(problem));
                response.finishResponse();
            }
        } catch (IOException | RuntimeException e) {
            // the connection is going: nothing more can be said on it
        }
    }
}
