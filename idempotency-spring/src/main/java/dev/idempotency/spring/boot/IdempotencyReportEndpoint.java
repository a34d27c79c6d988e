package dev.idempotency.spring.boot;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyReport;
import dev.idempotency.ResolvedBy;
import dev.idempotency.store.IdempotencyAudit;
import java.security.Principal;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.transaction.support.TransactionOperations;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The run-time half of the idempotency report ({@link IdempotencyReport}) as the actuator endpoint
 * {@code idempotency}:
 * <ul>
 *   <li>{@code GET /actuator/idempotency}: JSON; the operations and this node's counts, what waits for an operator
 *       as stored ({@code backlog}: per operation, the {@code NEEDS_REVIEW} records and the age of the oldest, the
 *       claims stuck past their lease), the first {@value #LISTED} of each ({@code needsReview}, {@code stuck}:
 *       operation, readable key, status, instants, and {@code attempts}: the retries and takeovers the audit
 *       recorded for the key, when, what they met and why; never a result) and the latest resolutions by hand
 *       ({@code resolutions}: who, when, why);</li>
 *   <li>{@code GET /actuator/idempotency/markdown}: the Markdown page;</li>
 *   <li>{@code POST /actuator/idempotency}, a write operation, <strong>off unless turned on</strong>
 *       ({@code management.endpoint.idempotency.access=unrestricted}): an authenticated operator resolves a key whose
 *       outcome nobody knows (a {@code NEEDS_REVIEW} record, or a claim stuck past its lease) with a JSON body
 *       {@code {"operation": ..., "key": ..., "scope": ..., "outcome": "not-executed" | "executed", "result": ...,
 *       "reason": ...}}: {@code not-executed} releases it (the next call runs), {@code executed} records
 *       {@code result} (the JSON the method would have returned, read as its declared return type) for the
 *       operation's ttl. The resolution names the principal as its actor and is written to the audit in the same
 *       transaction; without a principal it is refused (403).</li>
 * </ul>
 * Like Boot's {@code shutdown}, the endpoint's default access is read-only. Readable keys (business identifiers),
 * actors and reasons are shown as {@code management.endpoint.idempotency.show-keys} says (by default only to an
 * authenticated principal, in one of {@code management.endpoint.idempotency.roles} when set); to anyone else they
 * read {@value #MASK}.
 */
@Endpoint(id = "idempotency", defaultAccess = Access.READ_ONLY)
public class IdempotencyReportEndpoint {

    /** How many keys of each list the JSON report shows. */
    static final int LISTED = 50;
    /** What a reader not allowed to see keys reads in their place. */
    static final String MASK = "******";

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final Supplier<List<IdempotencyAdmin.Operation>> operations;
    private final IdempotencyReport.Counts counts;
    private final BooleanSupplier confirmationGate;
    private final Supplier<@Nullable IdempotencyAdmin> admin;
    private final Clock clock;
    private final Guard guard;
    private final IdempotencyResolver resolver;

    /**
     * @param operations       the operations on the class path ({@link IdempotencyAdmin#operations()})
     * @param counts           the outcomes this node counted
     * @param confirmationGate whether a {@code ConfirmationGate} is configured
     */
    public IdempotencyReportEndpoint(Supplier<List<IdempotencyAdmin.Operation>> operations,
            IdempotencyReport.Counts counts, BooleanSupplier confirmationGate) {
        this(operations, counts, confirmationGate, () -> null, Clock.systemUTC(), MAPPER, Guard.DEFAULTS);
    }

    /**
     * @param admin   the admin on the executor's store (null when the application has none): the backlog, the lists
     *                and the resolution
     * @param clock   the executor's clock
     * @param results reads an {@code executed} resolution's result (the application's mapper)
     * @param guard   who sees keys and who may resolve, and the transaction a resolution runs in
     */
    public IdempotencyReportEndpoint(Supplier<List<IdempotencyAdmin.Operation>> operations,
            IdempotencyReport.Counts counts, BooleanSupplier confirmationGate,
            Supplier<@Nullable IdempotencyAdmin> admin, Clock clock, JsonMapper results, Guard guard) {
        this.operations = operations;
        this.counts = counts;
        this.confirmationGate = confirmationGate;
        this.admin = admin;
        this.clock = clock;
        this.guard = guard;
        this.resolver = new IdempotencyResolver(admin, results, guard.transactions());
    }

    /**
     * Who reads keys, who resolves, and in which transaction.
     *
     * @param showKeys     when readable keys, actors and reasons are shown ({@code WHEN_AUTHORIZED}: to an
     *                     authenticated principal in one of {@code roles}, or any authenticated one when it is empty)
     * @param roles        the roles allowed to read keys and to resolve; empty: any authenticated principal
     * @param transactions runs each resolution with its audit entry in one transaction
     */
    public record Guard(Show showKeys, Set<String> roles, TransactionOperations transactions) {

        /** Keys to authenticated principals, any role, no transaction. */
        public static final Guard DEFAULTS = new Guard(Show.WHEN_AUTHORIZED, Set.of(),
                TransactionOperations.withoutTransaction());

        public Guard {
            roles = Set.copyOf(roles);
        }

        boolean showsKeys(SecurityContext context) {
            return showKeys.isShown(context, roles);
        }

        /** Why {@code context} may not resolve, or null if it may. */
        @Nullable String refusal(SecurityContext context) {
            Principal principal = context.getPrincipal();
            if (principal == null || principal.getName() == null || principal.getName().isBlank()) {
                return "resolving a key needs an authenticated operator, whose name the audit records: put the"
                        + " endpoint behind Spring Security (docs/security.md)";
            }
            if (!roles.isEmpty() && roles.stream().noneMatch(context::isUserInRole)) {
                return principal.getName() + " has none of the roles management.endpoint.idempotency.roles names";
            }
            return null;
        }
    }

    private IdempotencyReport build(boolean showKeys) {
        IdempotencyReport report = IdempotencyReport.of(operations.get()).counts(counts)
                .confirmationGate(confirmationGate.getAsBoolean());
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin == null) {
            return report;
        }
        report.backlog(theAdmin, clock.instant());
        try {
            report.resolutions(theAdmin.resolutions(LISTED).stream().map(e -> showKeys ? e : masked(e)).toList());
        } catch (RuntimeException e) {
            // the rest of the report stands; the section says why it is empty
            report.resolutionsUnavailable(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return report;
    }

    private static IdempotencyAudit.Entry masked(IdempotencyAudit.Entry e) {
        return new IdempotencyAudit.Entry(e.operation(), MASK, e.tier(), e.before(), e.action(),
                new ResolvedBy(MASK, MASK), e.at());
    }

    /** The report as JSON, with the first keys waiting for an operator. */
    @ReadOperation
    public Map<String, Object> report(SecurityContext securityContext) {
        boolean showKeys = guard.showsKeys(securityContext);
        Map<String, Object> json = MAPPER.readValue(build(showKeys).toJson(),
                new TypeReference<Map<String, Object>>() { });
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin != null && !json.containsKey("backlogUnavailable")) {
            try {
                json.put("needsReview", listed(theAdmin, theAdmin.needsReview(LISTED), showKeys));
                json.put("stuck", listed(theAdmin, theAdmin.stuck(LISTED), showKeys));
            } catch (RuntimeException e) {
                json.put("backlogUnavailable", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        if (!showKeys) {
            json.put("keysShown", false);
        }
        return json;
    }

    /**
     * The entries as JSON, each with the attempts the audit recorded for its key ({@link IdempotencyAdmin#attempts};
     * the store keeps no scope, so these are the attempts of the key claimed without one).
     */
    private static List<?> listed(IdempotencyAdmin admin, List<IdempotencyAdmin.Entry> entries, boolean showKeys) {
        List<Map<String, Object>> list = MAPPER.convertValue(entries, new TypeReference<List<Map<String, Object>>>() {
        });
        for (int i = 0; i < list.size(); i++) {
            IdempotencyAdmin.Entry entry = entries.get(i);
            Map<String, Object> e = list.get(i);
            try {
                e.put("attempts", admin.attempts(entry.operation(), "", entry.key()).stream()
                        .map(a -> attempt(a, showKeys)).toList());
            } catch (RuntimeException failed) {
                // the entry stands; its attempts say why they are missing
                e.put("attemptsUnavailable", failed.getClass().getSimpleName() + ": " + failed.getMessage());
            }
            if (!showKeys) {
                // a digest of few possible arguments (an amount) could be found by trying them
                e.put("key", MASK);
                e.put("argumentsDigest", MASK);
            }
        }
        return list;
    }

    /** One recorded attempt; its detail (an exception's message, which may name the key) masked like keys. */
    private static Map<String, Object> attempt(IdempotencyAudit.Attempt a, boolean showKeys) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("at", a.at().toString());
        json.put("kind", a.kind().name());
        json.put("met", a.met().name());
        json.put("detail", showKeys ? a.detail() : MASK);
        return json;
    }

    /** The report as Markdown ({@code format} = {@code markdown}). */
    @ReadOperation(produces = "text/markdown")
    public String format(SecurityContext securityContext, @Selector String format) {
        if (!format.equals("markdown")) {
            throw new IllegalArgumentException("the idempotency report comes as json (no selector) or markdown,"
                    + " not " + format);
        }
        return build(guard.showsKeys(securityContext)).toMarkdown();
    }

    /**
     * Resolves a key whose outcome nobody knows ({@link IdempotencyAdmin#release} or
     * {@link IdempotencyAdmin#resolveExecuted}), as the authenticated principal, in one transaction with its audit
     * entry.
     *
     * @param securityContext who asks: the principal is the resolution's actor
     * @param operation       the operation name
     * @param key             the key, as the key expression yielded it
     * @param scope           what the {@code IdempotencyScope} returned for the call (a tenant); absent for none
     * @param outcome         {@code not-executed} (release: the next call runs) or {@code executed}
     * @param result          for {@code executed}: the method's result as JSON, replayed to every later call for
     *                        the operation's ttl; required unless the method is {@code void} (the literal
     *                        {@code null} records null)
     * @param reason          why: what the operator checked; recorded in the audit
     * @return 200 with {@code resolved: true}; 403 without an authenticated principal (or one without the roles);
     *         404 when no record holds the key; 409 when the record is not an unknown outcome, or changed while it
     *         was being resolved; 400 for a bad request; 503 when the store or the audit failed (nothing changed
     *         when they share a transaction)
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> resolve(SecurityContext securityContext, String operation,
            String key, @Nullable String scope, String outcome, @Nullable String result, @Nullable String reason) {
        String refusal = guard.refusal(securityContext);
        if (refusal != null) {
            return answer(403, operation, key, refusal);
        }
        IdempotencyResolver.Answer answer = resolver.resolve(securityContext.getPrincipal().getName(), operation,
                scope, key, outcome, result, reason);
        return answer(answer.status(), operation, key, answer.problem());
    }

    private static WebEndpointResponse<Map<String, Object>> answer(int status, String operation, String key,
            @Nullable String problem) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("operation", operation);
        body.put("key", key);
        body.put("resolved", status == 200);
        Optional.ofNullable(problem).ifPresent(p -> body.put("problem", p));
        return new WebEndpointResponse<>(body, status);
    }
}
