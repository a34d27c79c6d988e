package dev.idempotency.spring.boot;

import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who reads keys on the {@code idempotency} actuator endpoint ({@link IdempotencyReportEndpoint}) and who may resolve
 * one there, beside Boot's own {@code management.endpoint.idempotency.access} (read-only unless set to
 * {@code unrestricted}), as Boot's {@code env} endpoint has {@code show-values} and {@code roles}.
 */
@ConfigurationProperties("management.endpoint.idempotency")
public class IdempotencyEndpointProperties {

    /**
     * When the report shows readable keys (business identifiers), and the actors and reasons of resolutions:
     * never, when-authorized (an authenticated principal, in one of the roles when roles are set) or always.
     * Otherwise they read "******".
     */
    private Show showKeys = Show.WHEN_AUTHORIZED;

    /**
     * Roles allowed to read keys (with show-keys when-authorized) and to resolve a key with a POST; empty: any
     * authenticated principal.
     */
    private Set<String> roles = new LinkedHashSet<>();

    public Show getShowKeys() {
        return showKeys;
    }

    public void setShowKeys(Show showKeys) {
        this.showKeys = showKeys;
    }

    public Set<String> getRoles() {
        return roles;
    }

    public void setRoles(Set<String> roles) {
        this.roles = roles;
    }
}
