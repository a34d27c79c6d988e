package dev.idempotency.web;

import dev.idempotency.Tier;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a Spring MVC handler method idempotent under the {@code Idempotency-Key} request header: the first request
 * with a key runs the method and records its response (status, body, the allow-listed headers); a retry with the
 * same key and the same request gets that response back, with {@code Idempotent-Replayed: true}, without running the
 * method again.
 *
 * <pre>{@code
 * @PostMapping("/orders")
 * @IdempotentRequest(tier = Tier.REVERSIBLE, ttl = "24h")
 * @Transactional
 * public ResponseEntity<Order> create(@RequestBody OrderRequest request) { ... }
 * }</pre>
 *
 * <p>Applied by {@link IdempotentRequestHandlerAdapter} (auto-configured by Spring Boot). The answers:
 * <ul>
 * <li>400 when the header is missing ({@link #required()}) or malformed;</li>
 * <li>422 when the key was used with another request (method, path, body, the {@link #parameters()});</li>
 * <li>409 with {@code Retry-After} when the first request with the key is still running after {@link #lockTimeout()};</li>
 * <li>otherwise the method's response, recorded unless it is a 5xx; an exception the method throws is handled by
 * the application's exception handlers as usual and records nothing (the key is released for a retry, or, for
 * {@link Tier#IRREVERSIBLE}, held for review as with {@code @Idempotent}).</li>
 * </ul>
 * When the method is {@code @Transactional}, the claim of the key, the method and the recorded response share one
 * transaction, opened before the key is claimed; the response is sent after it commits. See {@code docs/http.md}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface IdempotentRequest {

    /** The kind of side effect, as on {@code @Idempotent}; required. {@link Tier#READ_ONLY} is refused. */
    Tier tier();

    /** How long the recorded response is replayed: {@code 30s}, {@code 15m}, {@code 24h}, {@code 7d} or ISO-8601. */
    String ttl() default "24h";

    /** How long a duplicate waits for a first request in flight before it gets 409. */
    String lockTimeout() default "10s";

    /** Whether a request without the header is refused with 400; if false it runs without protection. */
    boolean required() default true;

    /**
     * Query or form parameters that belong to the request's identity: a retry with the same key and another value
     * of one of these is a 422. Others are left out of the fingerprint.
     */
    String[] parameters() default {};

    /**
     * The key space; empty for the adapter's (by default {@code http}, one space for every endpoint, so that a key
     * sent to two endpoints is a 422, as the draft says).
     */
    String operation() default "";
}
