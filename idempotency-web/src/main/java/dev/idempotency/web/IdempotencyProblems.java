package dev.idempotency.web;

import java.net.URI;

/**
 * The stable {@code type} URIs of the RFC 9457 problem details that {@link IdempotentRequestHandlerAdapter} answers
 * with ({@code application/problem+json}). They never change within a major version; {@code docs/http.md} lists them.
 */
public final class IdempotencyProblems {

    private static final String BASE = "https://idempotency.dev/problems/";

    /** 400: the handler requires an {@code Idempotency-Key} header and the request has none. */
    public static final URI MISSING_KEY = URI.create(BASE + "missing-key");
    /** 400: the header is not one sf-string or token of 1 to the maximum number of printable ASCII characters. */
    public static final URI INVALID_KEY = URI.create(BASE + "invalid-key");
    /**
     * 400: the body is labelled JSON ({@code application/json}, {@code *+json}) but is not one JSON document the
     * fingerprint can read: a syntax error, a member name twice in one object, content after the document.
     */
    public static final URI INVALID_BODY = URI.create(BASE + "invalid-body");
    /** 422: the key was used before with another request (method, path, body or chosen parameters). */
    public static final URI KEY_REUSED = URI.create(BASE + "key-reused");
    /** 409: the first request with this key is still being processed; retry after {@code Retry-After}. */
    public static final URI IN_FLIGHT = URI.create(BASE + "in-flight");
    /** 413: the request body is larger than the adapter records a fingerprint of. */
    public static final URI BODY_TOO_LARGE = URI.create(BASE + "body-too-large");
    /** 428: the confirmation gate wants a confirmation before the first execution. */
    public static final URI CONFIRMATION_REQUIRED = URI.create(BASE + "confirmation-required");
    /** 500: an irreversible request's outcome is unknown; an operator must resolve the key. Do not retry. */
    public static final URI OUTCOME_UNKNOWN = URI.create(BASE + "outcome-unknown");
    /** 500: the recorded response could not be read back. */
    public static final URI REPLAY_FAILED = URI.create(BASE + "replay-failed");
    /**
     * 500: the response was larger than the adapter records ({@code idempotency.web.max-response-size}); it was not
     * sent, nothing was recorded, and the key was handled as for any result the engine cannot record.
     */
    public static final URI RESPONSE_TOO_LARGE = URI.create(BASE + "response-too-large");
    /** 503: the idempotency store failed; retrying later with the same key is safe. */
    public static final URI STORE_UNAVAILABLE = URI.create(BASE + "store-unavailable");

    private IdempotencyProblems() {
    }
}
