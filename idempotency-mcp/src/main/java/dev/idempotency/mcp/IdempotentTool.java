package dev.idempotency.mcp;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.Tier;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One MCP tool: an {@link IdempotentOperation} (its name, tier, time-to-live) with the handler that does its work,
 * and the record its JSON arguments decode into. The input schema is generated from that record's components, so it
 * describes exactly what decodes.
 *
 * <pre>{@code
 * record RefundArgs(String orderId, long cents) { }
 * IdempotentTool<RefundArgs, Receipt> refund = IdempotentTool
 *     .builder(refundOperation, RefundArgs.class, args -> gateway.refund(args.orderId(), args.cents()))
 *     .name("refund").description("Refund an order, once").build();
 * }</pre>
 *
 * @param <A> the arguments record
 * @param <R> the result
 */
public final class IdempotentTool<A, R> {

    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,128}");

    /** The work of one call, given its decoded arguments. */
    @FunctionalInterface
    public interface Handler<A, R> {
        R handle(A arguments) throws Exception;
    }

    private final IdempotentOperation<R> operation;
    private final Class<A> argumentType;
    private final Handler<A, R> handler;
    private final String name;
    private final @Nullable String title;
    private final String description;
    private final boolean openWorld;
    private final IdempotentExecutor.@Nullable Compensation<R> compensation;

    private IdempotentTool(Builder<A, R> b) {
        this.operation = b.operation;
        this.argumentType = b.argumentType;
        this.handler = b.handler;
        this.name = b.name != null ? b.name : operation.name().replaceAll("[^A-Za-z0-9_.-]", "_");
        this.title = b.title;
        this.description = b.description != null ? b.description : operation.name();
        this.openWorld = b.openWorld;
        if (!TOOL_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("tool name '" + name + "' of " + operation.description()
                    + " must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'");
        }
        InputSchemas.requireRecord(argumentType, name);
        this.compensation = b.compensation;
        if (compensation != null && operation.tier() != Tier.REVERSIBLE) {
            throw new IllegalArgumentException("tool '" + name + "' of " + operation.description() + " has a"
                    + " compensation, but only REVERSIBLE operations compensate; its tier is " + operation.tier());
        }
    }

    /**
     * @param operation    the operation this tool runs (its tier decides the annotations, the key and the gate)
     * @param argumentType a record whose components are the tool's arguments
     * @param handler      the work
     */
    public static <A, R> Builder<A, R> builder(IdempotentOperation<R> operation, Class<A> argumentType,
            Handler<A, R> handler) {
        return new Builder<>(operation, argumentType, handler);
    }

    public IdempotentOperation<R> operation() {
        return operation;
    }

    public Class<A> argumentType() {
        return argumentType;
    }

    Handler<A, R> handler() {
        return handler;
    }

    IdempotentExecutor.@Nullable Compensation<R> compensation() {
        return compensation;
    }

    /** The tool's name in {@code tools/list}. */
    public String name() {
        return name;
    }

    public @Nullable String title() {
        return title;
    }

    public String description() {
        return description;
    }

    /** Whether the tool reaches outside the application: {@code openWorldHint} in {@code tools/list}. */
    public boolean openWorld() {
        return openWorld;
    }

    /** Builds an {@link IdempotentTool}. */
    public static final class Builder<A, R> {
        private final IdempotentOperation<R> operation;
        private final Class<A> argumentType;
        private final Handler<A, R> handler;
        private @Nullable String name;
        private @Nullable String title;
        private @Nullable String description;
        private boolean openWorld = true;
        private IdempotentExecutor.@Nullable Compensation<R> compensation;

        private Builder(IdempotentOperation<R> operation, Class<A> argumentType, Handler<A, R> handler) {
            this.operation = Objects.requireNonNull(operation, "operation");
            this.argumentType = Objects.requireNonNull(argumentType, "argumentType");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** The tool name; the operation name (characters MCP refuses replaced by {@code _}) unless set. */
        public Builder<A, R> name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder<A, R> title(String title) {
            this.title = Objects.requireNonNull(title, "title");
            return this;
        }

        /** What the tool does, for the model; the operation name unless set. */
        public Builder<A, R> description(String description) {
            this.description = Objects.requireNonNull(description, "description");
            return this;
        }

        /**
         * Whether the tool reaches outside the application (a payment gateway, another service, the internet), shown
         * as the tool's {@code openWorldHint}; true unless set, as MCP assumes for a tool that does not say. Set it
         * false for a tool that only reads or writes the application's own data.
         */
        public Builder<A, R> openWorld(boolean openWorld) {
            this.openWorld = openWorld;
            return this;
        }

        /**
         * What undoes one call of a {@link Tier#REVERSIBLE} tool, as {@code @Idempotent(compensate = ...)} does for a
         * method: the executor calls it, after the rollback, when the handler returned but the transaction the call
         * ran in then rolled back (its outcome was never recorded, so a retry runs the handler again). It needs a
         * transaction around the call that the executor's {@code TransactionBridge} sees: see
         * {@link McpIdempotentTools.Builder#transaction}. Without one nothing is ever compensated, as on the proxy
         * path.
         */
        public Builder<A, R> compensation(IdempotentExecutor.Compensation<R> compensation) {
            this.compensation = Objects.requireNonNull(compensation, "compensation");
            return this;
        }

        /**
         * @throws IllegalArgumentException if the name is not a valid MCP tool name, the argument type is not a
         *                                  record of supported component types, or a compensation is given to a tier
         *                                  other than {@code REVERSIBLE}
         */
        public IdempotentTool<A, R> build() {
            return new IdempotentTool<>(this);
        }
    }
}
