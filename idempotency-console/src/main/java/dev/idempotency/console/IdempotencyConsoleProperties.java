package dev.idempotency.console;

import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The operator console ({@code idempotency.console.*}): off unless turned on, and then served under its path to
 * authenticated principals only.
 */
@ConfigurationProperties("idempotency.console")
public class IdempotencyConsoleProperties {

    /**
     * Whether the console is served. Off by default: turn it on only where the application authenticates its users
     * (Spring Security, or the servlet container), since every page needs an authenticated principal.
     */
    private boolean enabled;

    /** The path the console is served under: "/" followed by path segments, no trailing "/". */
    private String path = "/idempotency";

    /**
     * The roles allowed to use the console (each checked with HttpServletRequest.isUserInRole). Empty: any
     * authenticated principal.
     */
    private Set<String> roles = new LinkedHashSet<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return path;
    }

    /**
     * @throws IllegalArgumentException if the path does not start with "/", ends with "/", or holds characters
     *                                  other than letters, digits, "/", "-", "_" and "."
     */
    public void setPath(String path) {
        if (!path.matches("(/[A-Za-z0-9._-]+)+")) {
            throw new IllegalArgumentException("idempotency.console.path must be \"/\" followed by path segments"
                    + " of letters, digits, '.', '_' and '-', without a trailing \"/\", was '" + path + "'");
        }
        this.path = path;
    }

    public Set<String> getRoles() {
        return roles;
    }

    public void setRoles(Set<String> roles) {
        this.roles = roles;
    }
}
