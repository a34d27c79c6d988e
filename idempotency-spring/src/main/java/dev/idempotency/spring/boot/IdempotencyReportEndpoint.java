package dev.idempotency.spring.boot;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyReport;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The run-time half of the idempotency report ({@link IdempotencyReport}) as the actuator endpoint
 * {@code idempotency}: {@code GET /actuator/idempotency} answers JSON, {@code GET /actuator/idempotency/markdown}
 * the Markdown page. Expose it like any endpoint ({@code management.endpoints.web.exposure.include=idempotency}); it
 * shows operation names, key expressions and counts, no keys or results.
 */
@Endpoint(id = "idempotency")
public class IdempotencyReportEndpoint {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final Supplier<List<IdempotencyAdmin.Operation>> operations;
    private final IdempotencyReport.Counts counts;
    private final BooleanSupplier confirmationGate;

    /**
     * @param operations       the operations on the class path ({@link IdempotencyAdmin#operations()})
     * @param counts           the outcomes this node counted
     * @param confirmationGate whether a {@code ConfirmationGate} is configured
     */
    public IdempotencyReportEndpoint(Supplier<List<IdempotencyAdmin.Operation>> operations,
            IdempotencyReport.Counts counts, BooleanSupplier confirmationGate) {
        this.operations = operations;
        this.counts = counts;
        this.confirmationGate = confirmationGate;
    }

    private IdempotencyReport build() {
        return IdempotencyReport.of(operations.get()).counts(counts)
                .confirmationGate(confirmationGate.getAsBoolean());
    }

    /** The report as JSON. */
    @ReadOperation
    public Map<String, Object> report() {
        return MAPPER.readValue(build().toJson(), new TypeReference<Map<String, Object>>() { });
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
}
