package dev.idempotency.web;

import dev.idempotency.IdempotencyException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import tools.jackson.databind.json.JsonMapper;

/**
 * The adapter's refusals as RFC 9457 problem details ({@code application/problem+json}, the types of
 * {@link IdempotencyProblems}): the engine's exceptions answered by their {@link IdempotencyException#kind() kind},
 * in one {@code switch}, and the adapter's own refusals of a request it cannot identify or record. Logged under the
 * adapter's name, as before the adapter was split.
 */
final class ProblemResponses {

    private static final Log LOG = LogFactory.getLog(IdempotentRequestHandlerAdapter.class);

    /** One answer: its status, its stable {@code type}, its title and what the client is told. */
    record Problem(int status, URI type, String title, String detail) {
    }

    static final Problem MISSING_KEY = new Problem(400, IdempotencyProblems.MISSING_KEY, "Idempotency-Key required",
            "this request must carry an Idempotency-Key header");
    static final Problem INVALID_BODY = new Problem(400, IdempotencyProblems.INVALID_BODY, "Invalid JSON body",
            "the body is labelled JSON but is not one JSON document with each member name once per object; which "
                    + "request it is cannot be told");
    static final Problem RESPONSE_TOO_LARGE = new Problem(500, IdempotencyProblems.RESPONSE_TOO_LARGE,
            "Response too large to record", "the response was larger than this server records for an idempotent "
                    + "request; it was not sent and nothing was recorded");
    private static final Problem KEY_REUSED = new Problem(422, IdempotencyProblems.KEY_REUSED,
            "Idempotency-Key reused", "this Idempotency-Key was used with another request (method, path, body or "
                    + "parameters)");
    private static final Problem IN_FLIGHT = new Problem(409, IdempotencyProblems.IN_FLIGHT, "Request in progress",
            "the first request with this Idempotency-Key is still being processed; retry later to get its response");
    private static final Problem KEY_REFUSED = invalidKey("the key is not accepted: it must hold printable "
            + "characters only");
    private static final Problem CONFIRMATION_REQUIRED = new Problem(428, IdempotencyProblems.CONFIRMATION_REQUIRED,
            "Confirmation required", "this operation must be confirmed before it runs");
    private static final Problem OUTCOME_UNKNOWN = new Problem(500, IdempotencyProblems.OUTCOME_UNKNOWN,
            "Outcome unknown", "an earlier attempt with this Idempotency-Key may have taken effect; it awaits review, "
                    + "do not retry");
    private static final Problem REPLAY_FAILED = new Problem(500, IdempotencyProblems.REPLAY_FAILED, "Replay failed",
            "the recorded response could not be read back");
    private static final Problem STORE_UNAVAILABLE = new Problem(503, IdempotencyProblems.STORE_UNAVAILABLE,
            "Idempotency store unavailable", "the request could not be recorded; retrying later with the same "
                    + "Idempotency-Key is safe");

    private final JsonMapper mapper;
    private final Duration retryAfter;

    /**
     * @param mapper     writes the problems' bodies
     * @param retryAfter the {@code Retry-After} of a 409, rounded up to whole seconds
     */
    ProblemResponses(JsonMapper mapper, Duration retryAfter) {
        this.mapper = mapper;
        this.retryAfter = retryAfter;
    }

    /** 400 {@code invalid-key}: the header is not a key; {@code detail} says why. */
    static Problem invalidKey(String detail) {
        return new Problem(400, IdempotencyProblems.INVALID_KEY, "Invalid Idempotency-Key", detail);
    }

    /** 413 {@code body-too-large}: the body is over {@code maxBodySize} bytes. */
    static Problem bodyTooLarge(int maxBodySize) {
        return new Problem(413, IdempotencyProblems.BODY_TOO_LARGE, "Request body too large",
                "an idempotent request's body may have at most " + maxBodySize + " bytes");
    }

    /**
     * Answers an exception of the engine by its kind ({@code docs/http.md}, "The answers").
     *
     * @throws IdempotencyException {@code e} itself when it is {@link IdempotencyException.Kind#REFUSED refused}
     *                              (a misconfigured method, a result the engine cannot use): no HTTP answer of
     *                              this library's is right, so the application's error handling renders it
     */
    void answer(HttpServletRequest request, HttpServletResponse response, IdempotencyException e) throws IOException {
        Problem problem = switch (e.kind()) {
            case KEY_REUSED -> KEY_REUSED;
            case IN_PROGRESS -> {
                response.reset();
                response.setHeader("Retry-After", Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000)));
                yield IN_FLIGHT;
            }
            case INVALID_KEY -> KEY_REFUSED;
            case CONFIRMATION_REQUIRED -> CONFIRMATION_REQUIRED;
            case OUTCOME_UNKNOWN -> {
                LOG.warn(describe(request) + e.getMessage());
                yield OUTCOME_UNKNOWN;
            }
            case REPLAY_FAILED -> {
                LOG.error(describe(request) + e.getMessage(), e);
                yield REPLAY_FAILED;
            }
            case STORE_UNAVAILABLE -> {
                LOG.warn(describe(request) + e.getMessage(), e);
                yield STORE_UNAVAILABLE;
            }
            case REFUSED -> throw e;
        };
        send(request, response, problem);
    }

    /** 500 {@code response-too-large}, logged with {@code why} (which names the handler and the limit). */
    void responseTooLarge(HttpServletRequest request, HttpServletResponse response, String why) throws IOException {
        LOG.error(describe(request) + why);
        send(request, response, RESPONSE_TOO_LARGE);
    }

    /**
     * Sends {@code problem} in place of whatever the response holds (its {@code Retry-After} kept), unless the
     * response is committed already.
     */
    void send(HttpServletRequest request, HttpServletResponse response, Problem problem) throws IOException {
        String retryAfterValue = response.getHeader("Retry-After");
        if (!response.isCommitted()) {
            response.reset();
        }
        if (retryAfterValue != null) {
            response.setHeader("Retry-After", retryAfterValue);
        }
        ProblemDetail detail = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(problem.status()),
                problem.detail());
        detail.setType(problem.type());
        detail.setTitle(problem.title());
        try {
            detail.setInstance(new URI(request.getRequestURI()));
        } catch (URISyntaxException unusual) {
            // a path the container let through but java.net.URI refuses: the problem goes without its instance
        }
        // written field by field, in RFC 9457's order, so that the body does not depend on the application's
        // Jackson set-up (a ProblemDetail mix-in or not)
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("type", String.valueOf(detail.getType()));
        fields.put("title", String.valueOf(detail.getTitle()));
        fields.put("status", detail.getStatus());
        fields.put("detail", String.valueOf(detail.getDetail()));
        if (detail.getInstance() != null) {
            fields.put("instance", detail.getInstance().toString());
        }
        byte[] bytes = mapper.writeValueAsBytes(fields);
        response.setStatus(problem.status());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    private static String describe(HttpServletRequest request) {
        return "Idempotent request " + request.getMethod() + " " + request.getRequestURI() + ": ";
    }
}
