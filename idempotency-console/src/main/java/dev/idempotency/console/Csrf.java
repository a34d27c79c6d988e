package dev.idempotency.console;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import org.springframework.util.ClassUtils;

/**
 * The console's defence against cross-site requests: every POST must come from a page of the same origin (its
 * {@code Origin} header, or for a browser that sends none its {@code Referer}, names the request's own scheme, host
 * and port), and when Spring Security is present its CSRF token is put in every form (its filter checks it).
 */
final class Csrf {

    private static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.web.csrf.CsrfToken", Csrf.class.getClassLoader());

    private Csrf() {
    }

    /** The hidden field of Spring Security's CSRF token, or the empty string without it. */
    static String field(HttpServletRequest request) {
        return SECURITY ? SecurityToken.field(request) : "";
    }

    /** Whether the request names its own origin in {@code Origin} (or, without one, {@code Referer}). */
    static boolean sameOrigin(HttpServletRequest request) {
        String origin = request.getHeader("Origin");
        if (origin == null || origin.isBlank()) {
            origin = request.getHeader("Referer");
        }
        if (origin == null || origin.isBlank() || origin.equals("null")) {
            return false;
        }
        try {
            URI uri = URI.create(origin.trim());
            return request.getScheme().equalsIgnoreCase(uri.getScheme())
                    && request.getServerName().equalsIgnoreCase(uri.getHost())
                    && request.getServerPort() == port(uri);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static int port(URI uri) {
        if (uri.getPort() != -1) {
            return uri.getPort();
        }
        return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    /** Loaded only when Spring Security is on the class path. */
    private static final class SecurityToken {

        static String field(HttpServletRequest request) {
            if (request.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName())
                    instanceof org.springframework.security.web.csrf.CsrfToken token) {
                return "<input type=\"hidden\" name=\"" + Html.esc(token.getParameterName()) + "\" value=\""
                        + Html.esc(token.getToken()) + "\">";
            }
            return "";
        }
    }
}
