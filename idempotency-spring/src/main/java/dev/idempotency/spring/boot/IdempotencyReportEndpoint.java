package dev.idempotency.spring.boot;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyReport;
import dev.idempotency.ResultType;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.util.ClassUtils;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The run-time half of the idempotency report ({@link IdempotencyReport}) as the actuator endpoint
 * {@code idempotency}:
 * <ul>
 *   <li>{@code GET /actuator/idempotency}: JSON; the operations and this node's counts, what waits for an operator
 *       as stored ({@code backlog}: per operation, the {@code NEEDS_REVIEW} records and the age of the oldest, the
 *       claims stuck past their lease), and the first {@value #LISTED} of each ({@code needsReview}, {@code stuck}:
 *       operation, readable key, status, instants; never a result);</li>
 *   <li>{@code GET /actuator/idempotency/markdown}: the Markdown page;</li>
 *   <li>{@code POST /actuator/idempotency}, a write operation: an operator resolves a key whose outcome nobody
 *       knows (a {@code NEEDS_REVIEW} record, or a claim stuck past its lease) with a JSON body
 *       {@code {"operation": ..., "key": ..., "scope": ..., "outcome": "not-executed" | "executed", "result": ...}}:
 *       {@code not-executed} releases it (the next call runs), {@code executed} records {@code result} (the JSON the
 *       method would have returned, read as its declared return type) for the operation's ttl.</li>
 * </ul>
 * Expose it like any endpoint ({@code management.endpoints.web.exposure.include=idempotency}); the write operation
 * is guarded as every actuator write is: {@code management.endpoint.idempotency.access=read-only} turns it off, and
 * Spring Security should let only operators {@code POST} to it. The JSON shows readable keys (business identifiers).
 */
@Endpoint(id = "idempotency")
public class IdempotencyReportEndpoint {

    /** How many keys of each list the JSON report shows. */
    static final int LISTED = 50;

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final Supplier<List<IdempotencyAdmin.Operation>> operations;
    private final IdempotencyReport.Counts counts;
    private final BooleanSupplier confirmationGate;
    private final Supplier<@Nullable IdempotencyAdmin> admin;
    private final Clock clock;
    private final JsonMapper results;

    /**
     * @param operations       the operations on the class path ({@link IdempotencyAdmin#operations()})
     * @param counts           the outcomes this node counted
     * @param confirmationGate whether a {@code ConfirmationGate} is configured
     */
    public IdempotencyReportEndpoint(Supplier<List<IdempotencyAdmin.Operation>> operations,
            IdempotencyReport.Counts counts, BooleanSupplier confirmationGate) {
        this(operations, counts, confirmationGate, () -> null, Clock.systemUTC(), MAPPER);
    }

    /**
     * @param admin   the admin on the executor's store (null when the application has none): the backlog, the lists
     *                and the resolution
     * @param clock   the executor's clock
     * @param results reads an {@code executed} resolution's result (the application's mapper)
     */
    public IdempotencyReportEndpoint(Supplier<List<IdempotencyAdmin.Operation>> operations,
            IdempotencyReport.Counts counts, BooleanSupplier confirmationGate,
            Supplier<@Nullable IdempotencyAdmin> admin, Clock clock, JsonMapper results) {
        this.operations = operations;
        this.counts = counts;
        this.confirmationGate = confirmationGate;
        this.admin = admin;
        this.clock = clock;
        this.results = results;
    }

    private IdempotencyReport build() {
        IdempotencyReport report = IdempotencyReport.of(operations.get()).counts(counts)
                .confirmationGate(confirmationGate.getAsBoolean());
        IdempotencyAdmin theAdmin = admin.get();
        return theAdmin == null ? report : report.backlog(theAdmin, clock.instant());
    }

    /** The report as JSON, with the first keys waiting for an operator. */
    @ReadOperation
    public Map<String, Object> report() {
        Map<String, Object> json = MAPPER.readValue(build().toJson(), new TypeReference<Map<String, Object>>() { });
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin != null && !json.containsKey("backlogUnavailable")) {
            try {
                json.put("needsReview", MAPPER.convertValue(theAdmin.needsReview(LISTED), List.class));
                json.put("stuck", MAPPER.convertValue(theAdmin.stuck(LISTED), List.class));
            } catch (RuntimeException e) {
                json.put("backlogUnavailable", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        return json;
    }

    /** The report as Markdown ({@code format} = {@code markdown}). */
    @ReadOperation(produces = "text/markdown")
    public String format(@Selector String format) {
        if (!format.equals("markdown")) {
            throw new IllegalArgumentException("the idempotency report comes as json (no selector) or markdown,"
                    + " not " + format);
        }
        return build().toMarkdown();
    }

    /**
     * Resolves a key whose outcome nobody knows ({@link IdempotencyAdmin#release} or
     * {@link IdempotencyAdmin#resolveExecuted}).
     *
     * @param operation the operation name
     * @param key       the key, as the key expression yielded it
     * @param scope     what the {@code IdempotencyScope} returned for the call (a tenant); absent for none
     * @param outcome   {@code not-executed} (release: the next call runs) or {@code executed}
     * @param result    for {@code executed}: the method's result as JSON (absent or {@code null} for a {@code void}
     *                  method), replayed to every later call for the operation's ttl
     * @return 200 with {@code resolved: true}; 404 when no record holds the key; 409 when the record is not an
     *         unknown outcome, or changed while it was being resolved; 400 for a bad request
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> resolve(String operation, String key, @Nullable String scope,
            String outcome, @Nullable String result) {
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin == null) {
            return answer(503, operation, key, "no IdempotencyAdmin: the application has no single idempotency store");
        }
        String theScope = scope == null ? "" : scope;
        try {
            boolean found = switch (outcome) {
                case "not-executed" -> theAdmin.release(operation, theScope, key);
                case "executed" -> executed(theAdmin, operation, theScope, key, result);
                default -> throw new IllegalArgumentException("outcome must be not-executed or executed, was '"
                        + outcome + "'");
            };
            return found ? answer(200, operation, key, null)
                    : answer(404, operation, key, "no record holds this key (scope '" + theScope + "')");
        } catch (IllegalStateException e) {
            return answer(409, operation, key, e.getMessage());
        } catch (IllegalArgumentException | dev.idempotency.IdempotencyException | tools.jackson.core.JacksonException e) {
            return answer(400, operation, key, e.getMessage());
        }
    }

    private boolean executed(IdempotencyAdmin theAdmin, String operation, String scope, String key,
            @Nullable String result) {
        IdempotencyAdmin.Operation op = theAdmin.operation(operation).orElseThrow(() -> new IllegalArgumentException(
                "operation " + operation + " is not in the inventory (operations.json): resolve it as executed"
                        + " with IdempotencyAdmin.resolveExecuted in code, or as not-executed here"));
        Class<?> type = returnType(op);
        Object value = result == null || type == void.class ? null : results.readValue(result, type);
        @SuppressWarnings("unchecked")
        ResultType<Object> resultType = (ResultType<Object>) ResultType.of(type);
        return theAdmin.resolveExecuted(operation, scope, key, value, resultType, op.ttl());
    }

    /** The declared return type, when it is a class (a generic one is resolved in code, with its type token). */
    private static Class<?> returnType(IdempotencyAdmin.Operation op) {
        String name = op.returnType();
        if (name.contains("<")) {
            throw new IllegalArgumentException("operation " + op.name() + " returns " + name + ": resolve a generic"
                    + " result with IdempotencyAdmin.resolveExecuted in code and its ResultType");
        }
        try {
            return ClassUtils.forName(name, ClassUtils.getDefaultClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalArgumentException("operation " + op.name() + ": its return type " + name
                    + " cannot be loaded", e);
        }
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
