package dev.idempotency.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Binds an inbound request's {@code Idempotency-Key} for the request's duration ({@link IdempotencyKeys}), so that
 * the outbound calls it makes through {@link IdempotencyKeyInterceptor} carry the same key: a gateway forwarding its
 * caller's key. Register it only where that is what you want (Spring Boot: {@code idempotency.web.propagate-inbound-key=true});
 * a request whose header is missing or malformed runs with nothing bound.
 */
public final class IdempotencyKeyPropagationFilter extends OncePerRequestFilter {

    private final int maxKeyLength;

    /** @param maxKeyLength the longest key bound (longer ones are not propagated) */
    public IdempotencyKeyPropagationFilter(int maxKeyLength) {
        this.maxKeyLength = maxKeyLength;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String header = request.getHeader(IdempotencyKeyHeader.NAME);
        String key = null;
        if (header != null) {
            try {
                key = IdempotencyKeyHeader.parse(header, maxKeyLength);
            } catch (IllegalArgumentException malformed) {
                // the server side answers a malformed key; nothing is forwarded
            }
        }
        if (key == null) {
            chain.doFilter(request, response);
            return;
        }
        try {
            IdempotencyKeys.<Void, Exception>call(key, () -> {
                chain.doFilter(request, response);
                return null;
            });
        } catch (IOException | ServletException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new ServletException(e);
        }
    }
}
