package dev.idempotency.spring.boot;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.ResultType;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.json.JsonMapper;

/**
 * Resolves a key whose outcome nobody knows, as an actor the caller has authenticated, in one transaction with its
 * audit entry: what the actuator endpoint's write operation and the operator console
 * ({@code idempotency-console}) both do once they know who asks.
 *
 * <pre>{@code
 * IdempotencyResolver resolver = new IdempotencyResolver(() -> admin, mapper, new TransactionTemplate(tm));
 * IdempotencyResolver.Answer answer = resolver.resolve("alice", "Payments.refund", "", "REFUND:R-1",
 *         "not-executed", null, "the gateway statement shows no payout");
 * }</pre>
 */
public final class IdempotencyResolver {

    private final Supplier<@Nullable IdempotencyAdmin> admin;
    private final JsonMapper results;
    private final TransactionOperations transactions;

    /**
     * @param admin        the admin on the executor's store (null when the application has none)
     * @param results      reads an {@code executed} resolution's result (the application's mapper)
     * @param transactions runs each resolution with its audit entry in one transaction
     */
    public IdempotencyResolver(Supplier<@Nullable IdempotencyAdmin> admin, JsonMapper results,
            TransactionOperations transactions) {
        this.admin = Objects.requireNonNull(admin, "admin");
        this.results = Objects.requireNonNull(results, "results");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    /**
     * What a resolution came to, as an HTTP status.
     *
     * @param status  200 resolved; 404 no record holds the key; 409 the record is not an unknown outcome, or changed
     *                while it was being resolved; 400 a bad request (no reason, an unknown outcome, a result that
     *                does not read as the return type); 503 the store or the audit failed, or there is no admin
     * @param problem what went wrong, for a person; null when resolved
     */
    public record Answer(int status, @Nullable String problem) {

        /** Whether the key was resolved. */
        public boolean resolved() {
            return status == 200;
        }
    }

    /**
     * Resolves a key: {@code not-executed} releases it ({@link IdempotencyAdmin#release}: the next call runs),
     * {@code executed} records {@code result} ({@link IdempotencyAdmin#resolveExecuted}) for the operation's ttl.
     *
     * @param actor     who resolves: an authenticated principal's name, never a value the request chose
     * @param operation the operation name
     * @param scope     what the {@code IdempotencyScope} returned for the call (a tenant); null or empty for none
     * @param key       the key, as the key expression yielded it
     * @param outcome   {@code not-executed} or {@code executed}
     * @param result    for {@code executed}: the method's result as JSON, required unless the method is
     *                  {@code void} (the JSON literal {@code null} records null)
     * @param reason    why: what the operator checked; recorded in the audit
     * @return the answer; never throws for a refused resolution
     */
    public Answer resolve(String actor, String operation, @Nullable String scope, String key, String outcome,
            @Nullable String result, @Nullable String reason) {
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin == null) {
            return new Answer(503, "no IdempotencyAdmin: the application has no single idempotency store");
        }
        String theScope = scope == null ? "" : scope;
        try {
            ResolvedBy by = new ResolvedBy(actor, reason == null ? "" : reason);
            Boolean found = transactions.execute(status -> switch (outcome) {
                case "not-executed" -> theAdmin.release(operation, theScope, key, by);
                case "executed" -> executed(theAdmin, operation, theScope, key, result, by);
                default -> throw new IllegalArgumentException("outcome must be not-executed or executed, was '"
                        + outcome + "'");
            });
            return Boolean.TRUE.equals(found) ? new Answer(200, null)
                    : new Answer(404, "no record holds this key (scope '" + theScope + "')");
        } catch (IdempotencyStoreException e) {
            return new Answer(503, e.getMessage());
        } catch (IllegalStateException e) {
            return new Answer(409, e.getMessage());
        } catch (IllegalArgumentException | IdempotencyException | tools.jackson.core.JacksonException e) {
            return new Answer(400, e.getMessage());
        }
    }

    private boolean executed(IdempotencyAdmin theAdmin, String operation, String scope, String key,
            @Nullable String result, ResolvedBy by) {
        IdempotencyAdmin.Operation op = theAdmin.operation(operation).orElseThrow(() -> new IllegalArgumentException(
                "operation " + operation + " is not in the inventory (operations.json): resolve it as executed"
                        + " with IdempotencyAdmin.resolveExecuted in code, or as not-executed here"));
        Class<?> type = returnType(op);
        boolean absent = result == null || result.isBlank();
        if (absent && type != void.class && type != Void.class) {
            // a forgotten result must not become a null every retry replays as the method's answer
            throw new IllegalArgumentException("operation " + operation + " returns " + op.returnType()
                    + ": executed needs the result the method returned, as JSON (the literal null to record null)");
        }
        Object value = absent || type == void.class ? null : results.readValue(result, type);
        @SuppressWarnings("unchecked")
        ResultType<Object> resultType = (ResultType<Object>) ResultType.of(type);
        return theAdmin.resolveExecuted(operation, scope, key, value, resultType, op.ttl(), by);
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
}
