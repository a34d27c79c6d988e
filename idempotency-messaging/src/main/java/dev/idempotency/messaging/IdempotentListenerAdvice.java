package dev.idempotency.messaging;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.spring.KeyResolver;
import dev.idempotency.spring.internal.TransactionalCall;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Makes a message listener idempotent: an advice for the advice chain of a Spring AMQP (RabbitMQ) or Spring Kafka
 * listener container. Each delivery gets a key; the first delivery of a key runs the listener, and every later
 * delivery of it (a redelivery after a nack or a crash before the ack, a publisher's resend after a lost confirm, a
 * Kafka record read again after a rebalance) is acknowledged without running it again. It drives the one engine,
 * {@link IdempotentExecutor}, as {@code @Idempotent} does.
 *
 * <pre>{@code
 * @Bean
 * IdempotentListenerAdvice ordersIdempotency(IdempotentExecutor executor, PlatformTransactionManager tx) {
 *     return IdempotentListenerAdvice.rabbit(executor, "orders").transactionManager(tx).ttl("7d").build();
 * }
 *
 * @Bean
 * SimpleRabbitListenerContainerFactory ordersFactory(ConnectionFactory cf, IdempotentListenerAdvice ordersIdempotency) {
 *     SimpleRabbitListenerContainerFactory f = new SimpleRabbitListenerContainerFactory();
 *     f.setConnectionFactory(cf);
 *     f.setAdviceChain(ordersIdempotency);   // after a retry advice, if any: each attempt a claim of its own
 *     return f;
 * }
 * }</pre>
 *
 * <h2>The key</h2>
 * The operation is the listener id given to {@link #rabbit} or {@link #kafka}. The key is a SpEL expression
 * ({@link Builder#key(String)}) over the delivery, evaluated by the restricted {@link KeyResolver}:
 * <ul>
 *   <li>RabbitMQ: {@code #messageId}, {@code #payload}, {@code #headers}, {@code #queue}, {@code #routingKey}. Without
 *       an expression the key is {@code #queue + '/' + #messageId}: the publisher's message id, per queue. A message
 *       without a message id is then refused (below).</li>
 *   <li>Kafka: {@code #payload}, {@code #headers} (as UTF-8 text), {@code #key} (the record key), {@code #topic},
 *       {@code #partition}, {@code #offset}. There is no default: a record carries no id of its own.</li>
 * </ul>
 * {@code #payload} is the body read as JSON maps and lists when it is JSON ({@code #payload['orderNo']}), as text
 * otherwise; a Kafka value already deserialized to an object is that object ({@code #payload.orderNo}). A key of
 * several values is {@code #parts(...)}, never a {@code +} of two texts ({@code KeyParts}).
 *
 * <h2>The fingerprint and the scope</h2>
 * The engine fingerprints each delivery with its key: by default the SHA-256 of its body and the headers the key
 * reads by name ({@code #headers['order']}); {@link Builder#fingerprint(String...)} names other values,
 * {@link Builder#withoutFingerprint()} judges by key alone. A tenant belongs in {@link Builder#scope(String)}
 * ({@code #headers['tenant']}), hashed apart from the key, never in the key text.
 *
 * <h2>What happens to a delivery</h2>
 * <ul>
 *   <li>first delivery of its key: the listener runs; on return the outcome is recorded and the container acks;</li>
 *   <li>a key already recorded with the same fingerprint: the listener does not run, the advice returns and the
 *       container acks;</li>
 *   <li>a key already recorded with another fingerprint (another body under a reused id): rejected as below, with
 *       a reason naming the listener, the source and the key ({@link IdempotencyKeyReusedException});</li>
 *   <li>a key whose first delivery is still running elsewhere: after waiting up to the lock timeout, RabbitMQ
 *       requeues the message ({@code ImmediateRequeueAmqpException}), Kafka hands an
 *       {@link dev.idempotency.IdempotencyInProgressException} to the error handler
 *       ({@link IdempotentKafkaErrorHandling});</li>
 *   <li>the listener throws: nothing is recorded, the exception reaches the container unchanged, so that the
 *       message is retried or dead-lettered exactly as without this advice;</li>
 *   <li>no key (no message id, an expression that reads a missing header), or an {@link Tier#IRREVERSIBLE}
 *       outcome that is unknown (its first run crashed; the key is held for review): RabbitMQ rejects the message without requeue (to the
 *       queue's dead-letter exchange, or dropped without one); Kafka hands the engine's exception to the error
 *       handler.</li>
 * </ul>
 *
 * <h2>Transactions</h2>
 * With {@link Builder#transactionManager(PlatformTransactionManager)}, the claim and the listener run in one
 * transaction of that manager (joined when the container already runs one): the key is recorded in the same commit
 * as the listener's JDBC writes, and the container acks after that commit. Without it, the claim joins a transaction
 * the container runs (its {@code transactionManager}), or else commits on its own with a lease and the outcome is
 * recorded after the listener returns.
 *
 * <p>Declared as a bean, it checks once at startup that its {@code ttl} outlasts every retry or dead-letter delay the
 * application declares (a RabbitMQ queue with {@code x-message-ttl} that dead-letters, a {@code BackOff} or a
 * {@code RetryPolicy} bean) and logs a warning naming the operation when it does not.
 */
public final class IdempotentListenerAdvice implements MethodInterceptor, BeanFactoryAware, SmartInitializingSingleton {

    private static final Object[] NO_ARGUMENTS = new Object[0];

    private final IdempotentExecutor executor;
    private final Broker broker;
    private final IdempotentOperation<Void> operation;
    private final KeyResolver.Key key;
    private final boolean defaultKey;
    /** The call's scope, or null: the executor's {@code IdempotencyScope} decides. */
    private final KeyResolver.@Nullable Key scope;
    /** What is fingerprinted instead of the body and the headers the key reads; empty for that default. */
    private final List<KeyResolver.Key> fingerprint;
    private final boolean fingerprinted;
    /** The headers the key expression reads by name ({@code #headers['tenant']}), fingerprinted by default. */
    private final List<String> headersRead;
    private final TransactionOperations transactions;
    private @Nullable ListableBeanFactory beanFactory;

    private IdempotentListenerAdvice(Builder b) {
        this.executor = b.executor;
        this.broker = b.broker;
        String expression = b.key != null ? b.key : broker.defaultKey();
        if (expression == null) {
            throw new IllegalArgumentException("idempotent " + broker.name() + " listener '" + b.listenerId
                    + "' needs a key expression: a record has no id of its own; key on a header"
                    + " (#headers['message-id']), a business field (#payload['orderNo']) or, knowing what it means,"
                    + " the record's position (#topic + '-' + #partition + '@' + #offset)");
        }
        this.defaultKey = b.key == null;
        String description = broker.name() + " listener '" + b.listenerId + "' key \"" + expression + "\"";
        IdempotentOperation.Builder<Void> op = IdempotentOperation.builder(b.listenerId, b.tier, ResultType.of(void.class))
                .description(description);
        if (b.ttl != null) {
            op.ttl(b.ttl);
        }
        if (b.lockTimeout != null) {
            op.lockTimeout(b.lockTimeout);
        }
        this.operation = op.build();
        this.key = b.keys.compile(broker.keyVariables(), expression, description);
        this.scope = b.scope == null ? null : b.keys.compile(broker.keyVariables(), b.scope, broker.name()
                + " listener '" + b.listenerId + "' scope \"" + b.scope + "\"");
        List<KeyResolver.Key> prints = new ArrayList<>();
        for (String e : b.fingerprint) {
            prints.add(b.keys.compile(broker.keyVariables(), e, broker.name() + " listener '" + b.listenerId
                    + "' fingerprint \"" + e + "\""));
        }
        this.fingerprint = List.copyOf(prints);
        this.fingerprinted = b.fingerprinted;
        this.headersRead = headersRead(expression);
        this.transactions = b.transactionManager == null ? TransactionOperations.withoutTransaction()
                : new TransactionTemplate(b.transactionManager);
        executor.prepare(operation);
    }

    /**
     * Starts the advice of a Spring AMQP listener container.
     *
     * @param executor   the engine
     * @param listenerId the operation: the scope of the keys, stable across deployments (the listener's id)
     */
    public static Builder rabbit(IdempotentExecutor executor, String listenerId) {
        return new Builder(executor, RabbitBroker.INSTANCE, listenerId);
    }

    /**
     * Starts the advice of a Spring Kafka listener container ({@code ContainerProperties.setAdviceChain}); see also
     * {@link IdempotentKafkaErrorHandling}.
     *
     * @param executor   the engine
     * @param listenerId the operation: the scope of the keys, stable across deployments (the listener's id)
     */
    public static Builder kafka(IdempotentExecutor executor, String listenerId) {
        return new Builder(executor, KafkaBroker.INSTANCE, listenerId);
    }

    /** The operation every delivery runs under: its name is the listener id, and its ttl, tier and lock timeout. */
    public IdempotentOperation<Void> operation() {
        return operation;
    }

    /** The advice: runs the listener at most once per key. */
    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Broker.Delivery delivery = broker.delivery(invocation);
        if (delivery == null) {
            return invocation.proceed();
        }
        String k;
        String tenant;
        Object[] print;
        try {
            if (defaultKey && !delivery.hasMessageId()) {
                throw new IdempotencyKeyException(operation.description() + ": the message from " + delivery.source()
                        + " has no message id; let the publisher set one (MessageProperties.setMessageId, the same"
                        + " on every resend) or give the listener a key expression over the payload or headers;"
                        + " the message is rejected without requeue");
            }
            k = key.resolve(delivery.variables());
            tenant = scope == null ? null : scope.resolve(delivery.variables());
            print = fingerprint(delivery);
        } catch (IdempotencyKeyException e) {
            throw broker.reject(e);
        }
        try {
            return TransactionalCall.run(transactions, () -> run(tenant, k, print, invocation));
        } catch (IdempotencyException e) {
            throw switch (e.kind()) {
                case IN_PROGRESS -> broker.requeue(e);
                case KEY_REUSED -> broker.reject(new PayloadMismatchException(operation, e, operation.description()
                        + ": the message from " + delivery.source() + " has key '" + e.key() + "'" + (tenant == null
                        ? "" : " in scope '" + tenant + "'") + ", which a message with "
                        + (fingerprint.isEmpty() ? "another payload (its body, or a header the key reads)"
                        : "other fingerprinted values") + " already used: it is not run, and not acknowledged as"
                        + " processed; rejected without requeue. A publisher that reuses an id for another message,"
                        + " or a forged message, looks like this"));
                case INVALID_KEY, OUTCOME_UNKNOWN -> broker.reject(e);
                // the store, a replay, a confirmation or a refusal: the listener container's own error handling
                case STORE_UNAVAILABLE, REPLAY_FAILED, CONFIRMATION_REQUIRED, REFUSED -> e;
            };
        }
    }

    private @Nullable Void run(@Nullable String tenant, String k, Object[] print, MethodInvocation invocation)
            throws Throwable {
        IdempotentExecutor.Action<Void, Throwable> listener = () -> {
            invocation.proceed();
            return null;
        };
        return tenant == null ? executor.execute(operation, k, print, listener)
                : executor.execute(operation, tenant, k, print, listener);
    }

    /**
     * What the engine fingerprints of a delivery: by default the SHA-256 of its body and the headers the key reads;
     * the values of the fingerprint expressions when some are set (over an exact reading of the payload); nothing
     * with {@link Builder#withoutFingerprint()}.
     */
    private Object[] fingerprint(Broker.Delivery delivery) {
        if (!fingerprinted) {
            return NO_ARGUMENTS;
        }
        if (fingerprint.isEmpty()) {
            Map<String, @Nullable String> headers = new TreeMap<>();
            for (String name : headersRead) {
                Object value = delivery.headers().get(name);
                headers.put(name, value == null ? null : value.toString());
            }
            return new Object[] {Payloads.digest(delivery.body()), headers};
        }
        Object[] variables = delivery.variables().clone();
        variables[delivery.payloadIndex()] = Payloads.exact(delivery.body(), delivery.json());
        Object[] values = new Object[fingerprint.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = fingerprint.get(i).value(variables);
        }
        return values;
    }

    /** The names of the headers {@code expression} reads with a literal index, {@code #headers['tenant']}. */
    private static List<String> headersRead(String expression) {
        Set<String> names = new TreeSet<>();
        headersRead(new SpelExpressionParser().parseRaw(expression).getAST(), names);
        return List.copyOf(names);
    }

    private static void headersRead(SpelNode node, Set<String> names) {
        if (node instanceof CompoundExpression && node.getChildCount() >= 2
                && node.getChild(0) instanceof VariableReference v && v.toStringAST().equals("#headers")
                && node.getChild(1) instanceof Indexer i && i.getChildCount() == 1
                && i.getChild(0) instanceof StringLiteral name) {
            names.add(String.valueOf(name.getLiteralValue().getValue()));
        }
        for (int c = 0; c < node.getChildCount(); c++) {
            headersRead(node.getChild(c), names);
        }
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory instanceof ListableBeanFactory l ? l : null;
    }

    /** Warns when a declared retry or dead-letter delay outlasts the ttl; see {@link TtlCheck}. */
    @Override
    public void afterSingletonsInstantiated() {
        if (beanFactory != null) {
            TtlCheck.warnIfShorter(operation, TtlCheck.declaredDelays(beanFactory, broker));
        }
    }

    @Override
    public String toString() {
        return "IdempotentListenerAdvice[" + operation + ", key " + key.expression() + "]";
    }

    /**
     * A message whose key was used by a message with another payload: an {@link IdempotencyKeyReusedException} (a
     * Kafka error handler sends it straight to the recoverer), whose message says what happened to the delivery.
     */
    private static final class PayloadMismatchException extends IdempotencyKeyReusedException {
        private static final long serialVersionUID = 1L;
        private final String reason;

        PayloadMismatchException(IdempotentOperation<?> operation, IdempotencyException reused, String reason) {
            super(operation.name(), reused.key());
            this.reason = reason;
        }

        @Override
        public String getMessage() {
            return reason;
        }
    }

    /** Builds an {@link IdempotentListenerAdvice}; {@link #build()} rejects what cannot work. */
    public static final class Builder {
        private final IdempotentExecutor executor;
        private final Broker broker;
        private final String listenerId;
        private @Nullable String key;
        private Tier tier = Tier.REVERSIBLE;
        private @Nullable Duration ttl;
        private @Nullable Duration lockTimeout;
        private @Nullable PlatformTransactionManager transactionManager;
        private KeyResolver keys = KeyResolver.create();
        private @Nullable String scope;
        private List<String> fingerprint = List.of();
        private boolean fingerprinted = true;

        private Builder(IdempotentExecutor executor, Broker broker, String listenerId) {
            this.executor = Objects.requireNonNull(executor, "executor");
            this.broker = broker;
            this.listenerId = Objects.requireNonNull(listenerId, "listenerId");
        }

        /** The key, a SpEL expression over the delivery's variables (see the class comment). */
        public Builder key(String expression) {
            this.key = Objects.requireNonNull(expression, "key");
            return this;
        }

        /**
         * {@link Tier#REVERSIBLE} (the default): a delivery whose first run crashed runs again once its lease ran out.
         * {@link Tier#IRREVERSIBLE}: it is held for review ({@code NEEDS_REVIEW}) and the message rejected instead.
         */
        public Builder tier(Tier tier) {
            this.tier = Objects.requireNonNull(tier, "tier");
            return this;
        }

        /**
         * How long a processed key is remembered: longer than any redelivery can come (the broker's retries, the
         * longest dead-letter replay the team runs by hand); {@link IdempotentOperation#DEFAULT_TTL} unless set.
         */
        public Builder ttl(Duration ttl) {
            this.ttl = Objects.requireNonNull(ttl, "ttl");
            return this;
        }

        /** @param ttl {@code 30s}, {@code 15m}, {@code 24h}, {@code 7d} or ISO-8601 */
        public Builder ttl(String ttl) {
            return ttl(dev.idempotency.internal.Durations.parse(ttl, "ttl of listener '" + listenerId + "'"));
        }

        /** How long a duplicate waits for a first delivery still running before it is requeued. */
        public Builder lockTimeout(Duration lockTimeout) {
            this.lockTimeout = Objects.requireNonNull(lockTimeout, "lockTimeout");
            return this;
        }

        /**
         * Runs the claim and the listener in one transaction of this manager (joining the container's, if it runs
         * one), so that the key commits with the listener's writes and before the container acks.
         */
        public Builder transactionManager(PlatformTransactionManager transactionManager) {
            this.transactionManager = Objects.requireNonNull(transactionManager, "transactionManager");
            return this;
        }

        /**
         * The scope of each delivery's key, a SpEL expression over the same variables as the key: the tenant a
         * message belongs to, {@code #headers['tenant']}. It is hashed apart from the key (where a tenant joined into
         * the key text could meet another's: {@code 't1' + ':' + 'x:y'} is {@code 't1:x' + ':' + 'y'}), so that one
         * tenant's message never replays another's. A delivery whose scope is null, empty or blank is rejected as
         * one without a key is. Without it, the executor's {@code IdempotencyScope} decides, as for any call.
         */
        public Builder scope(String expression) {
            this.scope = Objects.requireNonNull(expression, "scope");
            return this;
        }

        /**
         * What is fingerprinted of each delivery instead of the default (the body's bytes and the headers the key
         * reads by name): the values of these SpEL expressions, over the same variables as the key, with the
         * payload's JSON numbers read exactly. For a business key whose messages differ in a field that does not
         * change the intent ({@code #payload['sentAt']}): {@code .fingerprint("#payload['lines']",
         * "#payload['amount']")}. A message under a known key with other values is rejected, never run or acked.
         */
        public Builder fingerprint(String... expressions) {
            Objects.requireNonNull(expressions, "expressions");
            if (expressions.length == 0) {
                throw new IllegalArgumentException("fingerprint(...) needs an expression; withoutFingerprint() judges"
                        + " deliveries by key alone");
            }
            this.fingerprint = List.of(expressions);
            this.fingerprinted = true;
            return this;
        }

        /**
         * Judges deliveries by key alone: a message under a known key is taken for the one already processed and
         * acknowledged, whatever its body (as before fingerprints; for a listener whose key is the whole intent).
         */
        public Builder withoutFingerprint() {
            this.fingerprint = List.of();
            this.fingerprinted = false;
            return this;
        }

        /** Evaluates the key with this resolver instead of the restricted default. */
        public Builder keyResolver(KeyResolver keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /**
         * @throws IllegalArgumentException if the listener id is blank, a Kafka listener has no key, or a duration
         *                                  is not positive
         * @throws IdempotencyKeyException  if the key expression does not parse or reads a variable that does not
         *                                  exist
         */
        public IdempotentListenerAdvice build() {
            if (listenerId.isBlank()) {
                throw new IllegalArgumentException("an idempotent " + broker.name() + " listener needs a listener id");
            }
            if (tier == Tier.READ_ONLY) {
                throw new IllegalArgumentException("idempotent " + broker.name() + " listener '" + listenerId
                        + "': tier READ_ONLY guards nothing; leave the advice out instead");
            }
            return new IdempotentListenerAdvice(this);
        }
    }
}
