package dev.idempotency.web;

import java.io.IOException;
import java.util.Objects;
import java.util.Set;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Sends the {@code Idempotency-Key} header on a {@code RestClient} (or {@code RestTemplate}) request: the key bound by
 * {@link IdempotencyKeys} at the outermost layer, as an sf-string. It sets the header once per logical request: an
 * interceptor after it that executes the request again (a retrying interceptor) sends the same header, and a request
 * that already carries one keeps it.
 *
 * <pre>{@code
 * RestClient orders = RestClient.builder().baseUrl(url)
 *     .requestInterceptor(IdempotencyKeyInterceptor.create())   // first, so that retries below it keep the key
 *     .build();
 * }</pre>
 *
 * <p>Only {@code POST} and {@code PATCH} get the header unless {@link #methods} says otherwise (the other methods are
 * idempotent by HTTP's own definition). Such a request with no key bound is refused with an
 * {@link IllegalStateException} before it is sent: minting a key here would give each attempt of a retry loop around
 * the call its own key, which is the bug the header exists to cure. {@link #mintPerRequest()} makes one per request
 * instead, for clients whose only retries run below this interceptor.
 */
public final class IdempotencyKeyInterceptor implements ClientHttpRequestInterceptor {

    private final Set<HttpMethod> methods;
    private final boolean mintPerRequest;

    private IdempotencyKeyInterceptor(Set<HttpMethod> methods, boolean mintPerRequest) {
        this.methods = Set.copyOf(methods);
        this.mintPerRequest = mintPerRequest;
    }

    /** For {@code POST} and {@code PATCH}, refusing a request with no key bound. */
    public static IdempotencyKeyInterceptor create() {
        return new IdempotencyKeyInterceptor(Set.of(HttpMethod.POST, HttpMethod.PATCH), false);
    }

    /** The same interceptor for these methods instead. */
    public IdempotencyKeyInterceptor methods(HttpMethod... methods) {
        return new IdempotencyKeyInterceptor(Set.of(methods), mintPerRequest);
    }

    /**
     * The same interceptor, minting a key for a request when none is bound. Only sound when every retry of the
     * request runs below this interceptor (a retrying interceptor registered after it): a retry loop around the
     * {@code RestClient} call would send a new key per attempt.
     */
    public IdempotencyKeyInterceptor mintPerRequest() {
        return new IdempotencyKeyInterceptor(methods, true);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        if (methods.contains(request.getMethod()) && !request.getHeaders().containsHeader(IdempotencyKeyHeader.NAME)) {
            String key = IdempotencyKeys.current().orElse(null);
            if (key == null) {
                if (!mintPerRequest) {
                    throw new IllegalStateException(request.getMethod() + " " + request.getURI() + " has no idempotency "
                            + "key: mint it once, outside every retry loop, with IdempotencyKeys.call(...)");
                }
                key = IdempotencyKeys.newKey();
            }
            request.getHeaders().set(IdempotencyKeyHeader.NAME, IdempotencyKeyHeader.format(Objects.requireNonNull(key)));
        }
        return execution.execute(request, body);
    }
}
