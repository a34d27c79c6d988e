package dev.idempotency.web;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/**
 * Whose key space a request's {@code Idempotency-Key} lives in, so that one client can never be answered with another
 * client's recorded response (the draft's security considerations). Called once per request, before the key is
 * claimed. The value is hashed into the stored key, never stored as is.
 */
@FunctionalInterface
public interface RequestScope {

    /**
     * The authenticated principal's name ({@link HttpServletRequest#getUserPrincipal()}, which Spring Security
     * fills), or the empty scope (one key space shared by every unauthenticated client) when there is none.
     */
    RequestScope PRINCIPAL = request -> {
        Principal principal = request.getUserPrincipal();
        return principal == null ? "" : principal.getName();
    };

    /** The scope of {@code request}; never null, empty for a shared key space. */
    String scope(HttpServletRequest request);
}
