/**
 * Both ends of the {@code Idempotency-Key} HTTP header (IETF draft-ietf-httpapi-idempotency-key-header).
 *
 * <p>Server: {@link dev.idempotency.web.IdempotentRequest} on a Spring MVC handler method, applied by
 * {@link dev.idempotency.web.IdempotentRequestHandlerAdapter}, which resolves the key from the header and drives the
 * one {@link dev.idempotency.IdempotentExecutor} (same store, pre-filter, metrics and admin as
 * {@code @Idempotent}). Errors are RFC 9457 problem details whose types are listed in
 * {@link dev.idempotency.web.IdempotencyProblems}.
 *
 * <p>Caller: {@link dev.idempotency.web.IdempotencyKeys} mints a key at the outermost layer and carries it inward;
 * {@link dev.idempotency.web.IdempotencyKeyInterceptor} sends it on every attempt of a {@code RestClient} request.
 */
@NullMarked
package dev.idempotency.web;

import org.jspecify.annotations.NullMarked;
