package dev.idempotency.mcp;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the adapter needs of one tool, whichever way it was declared: an {@link IdempotentTool} run through the
 * executor, or a bean's {@code @Idempotent} method run through its Spring proxy ({@link BeanMethodBinding}).
 */
abstract class ToolBinding {

    abstract String name();

    abstract @Nullable String title();

    abstract String description();

    /** Whether the tool reaches outside the application (a gateway, another service): MCP's openWorldHint. */
    abstract boolean openWorld();

    /** The operation name the engine records the call under. */
    abstract String operation();

    abstract Tier tier();

    abstract Duration ttl();

    abstract Duration lockTimeout();

    /** The tool's arguments, for the input schema. */
    abstract List<InputSchemas.Field> fields();

    /** Where the arguments are declared, for messages. */
    abstract String where();

    /**
     * Decodes the call's arguments (the key and confirmation already taken out).
     *
     * @throws IllegalArgumentException or a Jackson exception when they do not fit
     */
    abstract Object decode(JsonMapper mapper, Map<String, Object> arguments);

    /** Runs the call once per key (or replays it) through the engine. */
    abstract @Nullable Object invoke(Object decoded, String key) throws Exception;

    static <A, R> ToolBinding of(IdempotentTool<A, R> tool, IdempotentExecutor executor) {
        IdempotentOperation<R> op = tool.operation();
        executor.prepare(op);
        List<InputSchemas.Field> fields = InputSchemas.fields(tool.argumentType());
        return new ToolBinding() {
            @Override
            String name() {
                return tool.name();
            }

            @Override
            @Nullable String title() {
                return tool.title();
            }

            @Override
            String description() {
                return tool.description();
            }

            @Override
            boolean openWorld() {
                return tool.openWorld();
            }

            @Override
            String operation() {
                return op.name();
            }

            @Override
            Tier tier() {
                return op.tier();
            }

            @Override
            Duration ttl() {
                return op.ttl();
            }

            @Override
            Duration lockTimeout() {
                return op.lockTimeout();
            }

            @Override
            List<InputSchemas.Field> fields() {
                return fields;
            }

            @Override
            String where() {
                return tool.argumentType().getName();
            }

            @Override
            Object decode(JsonMapper mapper, Map<String, Object> arguments) {
                return mapper.convertValue(arguments, tool.argumentType());
            }

            @Override
            @Nullable Object invoke(Object decoded, String key) throws Exception {
                A args = tool.argumentType().cast(decoded);
                return executor.execute(op, key, new Object[] {args}, () -> {
                    McpCall.requireScoped(op.name());
                    return tool.handler().handle(args);
                }, tool.compensation());
            }
        };
    }
}
