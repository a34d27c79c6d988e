package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.CompletedOutcomes;
import dev.idempotency.internal.Fingerprints;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.CircuitOpenException;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.lang.reflect.Type;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * The engine: one idempotent call from key to recorded outcome ({@code docs/engine.md} draws its states). The
 * Spring aspect drives it for {@link Idempotent} methods; message listeners, MCP tool handlers and non-Spring code
 * call it directly:
 *
 * <pre>{@code
 * IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
 * IdempotentOperation<Receipt> refund = IdempotentOperation
 *     .builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Receipt.class)).ttl("7d").build();
 * Receipt r = executor.execute(refund, "REFUND:" + refundId, new Object[] {refundId, amount},
 *     () -> gateway.refund(refundId, amount));
 * }</pre>
 *
 * <p><b>The caller's transaction</b>, as its {@link TransactionBridge} shows it (the Spring module supplies one):
 * <ul>
 * <li>an outcome is replayed only once the method's writes committed: a rollback, or a rollback to a savepoint the
 * call ran under, releases the key (and runs the compensation); an unknown commit outcome releases nothing;</li>
 * <li>an exception from the method marks the transaction rollback-only, so that its writes never commit without
 * their claim;</li>
 * <li>an {@link Tier#IRREVERSIBLE} claim is committed outside the transaction before the method runs, and is held
 * for review ({@code NEEDS_REVIEW}) whenever its effect may have happened without a recorded outcome;</li>
 * <li>a committed claim's lease is renewed while the method runs and until the transaction ends;</li>
 * <li>a claim inside a read-only transaction fails before the method runs.</li>
 * </ul>
 * The rules, and why, are in {@code docs/design.md} ("The edges of the transaction model").
 *
 * <p>Thread-safe; build one and share it.
 */
public final class IdempotentExecutor {

    private static final System.Logger LOG = System.getLogger(IdempotentExecutor.class.getName());
    /** How many callers of one key may be in an executor at once on one node, unless the builder says otherwise. */
    public static final int DEFAULT_MAX_WAITERS_PER_KEY = 8;

    // package-private: what every IdempotentCall of this executor works with
    final IdempotencyStore store;
    /** The store when it holds completed outcomes in memory (the pre-filter): asked before a claim is built. */
    final @Nullable CompletedOutcomes inMemory;
    final ResultCodec codec;
    /** The decoded values of outcomes the pre-filter answered, for immutable result types. */
    final DecodedOutcomes decoded;
    final Fingerprints fingerprints;
    final Clock clock;
    final IdempotencyScope scope;
    final List<IdempotencyListener> listeners;
    final TransactionBridge transactions;
    final @Nullable ConfirmationGate gate;
    /** Where the attempts that meet a key in trouble are recorded; null: nowhere. */
    final @Nullable IdempotencyAudit attempts;
    private final IdempotencyObserver observer;
    private final Set<Type> replayableTypes = ConcurrentHashMap.newKeySet();
    final int maxWaitersPerKey;
    final KeyGates gates;
    /** Per operation: the circuit opening last warned about, and when a failure without a breaker last was. */
    private final ConcurrentHashMap<String, long[]> unguardedWarned = new ConcurrentHashMap<>();

    private IdempotentExecutor(Builder b) {
        this.store = b.store;
        this.inMemory = b.store instanceof CompletedOutcomes outcomes ? outcomes : null;
        JsonMapper mapper = b.mapper != null ? b.mapper : JacksonResultCodec.defaultMapper();
        this.codec = b.codec != null ? b.codec : JacksonResultCodec.using(mapper);
        this.decoded = new DecodedOutcomes(codec);
        this.fingerprints = new Fingerprints(mapper);
        this.clock = b.clock;
        this.scope = b.scope;
        this.listeners = List.copyOf(b.listeners);
        this.transactions = b.transactions;
        this.gate = b.gate;
        this.attempts = b.attempts;
        this.observer = b.observer;
        this.maxWaitersPerKey = b.maxWaitersPerKey;
        this.gates = new KeyGates(b.maxWaitersPerKey);
    }

    /** Starts an executor on {@code store}. */
    public static Builder builder(IdempotencyStore store) {
        return new Builder(store);
    }

    /** The work an idempotent call protects. */
    @FunctionalInterface
    public interface Action<T, E extends Throwable> {
        T run() throws E;
    }

    /**
     * Undoes one call's external effect: called when the method returned but the caller's transaction then rolled
     * back, so that its outcome was never recorded and a retry will run it again.
     */
    @FunctionalInterface
    public interface Compensation<T> {
        /** @param result what the method returned in the attempt being undone */
        void compensate(@Nullable T result) throws Exception;
    }

    /**
     * Checks, once, that the operation's result type can be replayed. Called when a method is first seen; calling it
     * again is cheap.
     *
     * @throws IdempotencyReplayException if the result type cannot be replayed
     */
    public void prepare(IdempotentOperation<?> operation) {
        Type type = operation.resultType().type();
        if (!replayableTypes.contains(type)) {
            try {
                codec.checkReplayable(type);
            } catch (IdempotencyReplayException e) {
                throw new IdempotencyReplayException(operation.description() + ": " + e.getMessage(), e);
            }
            replayableTypes.add(type);
        }
    }

    /**
     * Runs {@code action} at most once per key, or returns the recorded result of the run that did.
     *
     * @param operation the operation
     * @param key       the idempotency key: not blank, at most 1,024 characters, no control characters
     * @param arguments the call's arguments: fingerprinted (less the operation's ignored positions), and shown to a
     *                  {@link ConfirmationGate}
     * @param action    the work
     * @return the action's result, or the recorded one
     * @throws E                                   what the action threw: nothing was recorded and a retry runs again,
     *                                             unless it is one of the operation's
     *                                             {@link IdempotentOperation#replayExceptions() replayExceptions}:
     *                                             then it is the recorded outcome, and every replay throws a new
     *                                             instance of the listed class with the same message
     * @throws IdempotencyKeyException             if the key is refused
     * @throws IdempotencyException                if an argument cannot be serialized for the payload fingerprint
     * @throws IdempotencyKeyReusedException       if the key was used with other arguments
     * @throws IdempotencyInProgressException      if another attempt holds the key past the lock timeout
     * @throws IdempotencyOutcomeUnknownException  if an irreversible attempt crashed and awaits review
     * @throws ConfirmationRequiredException       if the confirmation gate refused
     * @throws IdempotencyReplayException          if the recorded result cannot be read back, or the result written
     * @throws IdempotencyStoreException           if the store failed
     */
    public <T, E extends Throwable> T execute(IdempotentOperation<T> operation, String key, Object[] arguments,
            Action<T, E> action) throws E {
        return execute(operation, key, arguments, action, null);
    }

    /**
     * Like {@link #execute(IdempotentOperation, String, Object[], Action)}, with a compensation for
     * {@link Tier#REVERSIBLE} calls: when the action returned inside a transaction that then rolled back, the
     * compensation runs exactly once, after the rollback (a failure in it is logged, never thrown: the caller's
     * exception is already on its way).
     */
    public <T, E extends Throwable> T execute(IdempotentOperation<T> operation, String key, Object[] arguments,
            Action<T, E> action, @Nullable Compensation<T> compensation) throws E {
        return execute(operation, null, key, arguments, action, compensation);
    }

    /**
     * Like {@link #execute(IdempotentOperation, String, Object[], Action)}, in {@code scope} rather than the one the
     * executor's {@link IdempotencyScope} returns: for a way in that reads each call's scope itself, such as a
     * message listener taking the tenant from a header. The scope is hashed apart from the key, so a tenant's key
     * never meets another tenant's, however the two are spelled (tenant {@code t1} with key {@code x:y} and tenant
     * {@code t1:x} with key {@code y} are two keys).
     *
     * @param scope the call's scope, never null ({@code ""} for none)
     */
    public <T, E extends Throwable> T execute(IdempotentOperation<T> operation, String scope, String key,
            Object[] arguments, Action<T, E> action) throws E {
        return execute(operation, Objects.requireNonNull(scope, "scope"), key, arguments, action, null);
    }

    /** Every {@code execute}: {@code scope} null takes the executor's {@link IdempotencyScope}. */
    private <T, E extends Throwable> T execute(IdempotentOperation<T> operation, @Nullable String scope, String key,
            Object[] arguments, Action<T, E> action, @Nullable Compensation<T> compensation) throws E {
        if (operation.tier() == Tier.READ_ONLY) {
            return action.run();
        }
        if (compensation != null && operation.tier() != Tier.REVERSIBLE) {
            throw new IllegalArgumentException(operation.description() + ": only REVERSIBLE operations compensate, "
                    + "this one is " + operation.tier());
        }
        if (compensation == null && operation.onStoreDown() == StoreDown.PROCEED_UNGUARDED) {
            throw new IllegalArgumentException(operation.description() + ": onStoreDown = PROCEED_UNGUARDED needs"
                    + " a compensation with every call (a call run without its key may run twice)");
        }
        IdempotentCall<T, E> call = new IdempotentCall<>(this, operation, scope, key, arguments, action, compensation);
        return observer == IdempotencyObserver.NONE ? call.proceed() : observer.around(operation, call);
    }

    /**
     * Whether the store is fronted by a pre-filter that holds completed outcomes in memory (the
     * {@code CaffeinePrefilter}): only then can {@link #replayHeldOr} answer a call by itself.
     */
    public boolean holdsOutcomesInMemory() {
        return inMemory != null;
    }

    /**
     * Answers the call from the pre-filter alone when it holds the key's completed outcome for these arguments, as
     * {@link #execute} would replay it (the same outcome, event and observation); otherwise runs {@code otherwise},
     * and that is all. For a way in that can ask before it begins the method's own transaction (the Spring proxy
     * advice, placed just outside the transaction advisor): a duplicate the pre-filter answers then borrows no
     * connection and begins no transaction. {@code otherwise} leads to {@link #execute} of the same call further in,
     * which decides everything else as always: a miss, a key or a scope that is refused, a payload mismatch, a
     * read-only transaction, no pre-filter at all. Nothing is claimed or waited for here, and nothing is published
     * unless the call is answered here.
     *
     * @param otherwise the rest of the call: its transaction, then {@link #execute}
     */
    public <T, E extends Throwable> T replayHeldOr(IdempotentOperation<T> operation, String key, Object[] arguments,
            Action<T, E> otherwise) throws E {
        CompletedOutcomes outcomes = inMemory;
        IdempotentCall<T, E> call = outcomes == null || operation.tier() == Tier.READ_ONLY ? null
                : held(outcomes, operation, key, arguments, otherwise);
        if (call == null) {
            return otherwise.run();
        }
        return observer == IdempotencyObserver.NONE ? call.proceed() : observer.around(operation, call);
    }

    /**
     * The call that replays the completed outcome the pre-filter holds for this key, with this call's fingerprint,
     * outside a read-only transaction; otherwise null. Quiet: whatever is refused here (the key, the scope, an
     * argument) is left for {@link #execute} to refuse, where the call's failure is published once. A miss costs the
     * key's hash and no object.
     */
    private <T, E extends Throwable> @Nullable IdempotentCall<T, E> held(CompletedOutcomes outcomes,
            IdempotentOperation<T> op, String key, Object[] arguments, Action<T, E> otherwise) {
        try {
            if (key == null || (transactions.isTransactionActive() && transactions.isReadOnly())) {
                return null;
            }
            String tenant = scope.current();
            if (tenant == null) {
                return null;
            }
            String normal = Keys.normalize(key);
            byte[] keyHash = Keys.hash(op.name(), tenant, normal);
            IdempotencyRecord hit = outcomes.completed(keyHash);
            if (hit == null) {
                return null;
            }
            prepare(op);
            IdempotentCall<T, E> call = new IdempotentCall<>(this, op, null, key, arguments, otherwise, null);
            byte[] fingerprint = fingerprints.fingerprint(call.arguments, op::isIgnored);
            if (!Arrays.equals(hit.fingerprint(), fingerprint)) {
                return null;
            }
            call.replays(hit, new CallIdentity(op.name(), Keys.readableNormalized(normal), keyHash, fingerprint));
            return call;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** How many callers of a key hash are waiting in this executor on this node (for tests and diagnostics). */
    int callersOf(byte[] keyHash) {
        return gates.callers(keyHash);
    }

    /** Publishes a call's outcome to the open {@link IdempotencyContext} scopes and the listeners. */
    void publish(IdempotentOperation<?> op, String key, Outcome outcome, long claimNanos, long startNanos) {
        IdempotencyContext.record(outcome);
        if (listeners.isEmpty()) {
            return;
        }
        IdempotencyEvent event = new IdempotencyEvent(op.name(), op.tier(), key, outcome,
                Duration.ofNanos(claimNanos), Duration.ofNanos(System.nanoTime() - startNanos));
        for (IdempotencyListener listener : listeners) {
            try {
                listener.onEvent(event);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "idempotency listener " + listener + " failed on " + event, e);
            }
        }
    }

    /**
     * Logs a warning the first time an operation runs unguarded in an outage: once per opening of the store's
     * circuit, and at most once a minute while failures still reach the store (no breaker, or before it opens).
     */
    void warnUnguarded(IdempotentOperation<?> op, IdempotencyStoreException failure) {
        long opening = -1;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof CircuitOpenException open) {
                opening = open.opening();
                break;
            }
        }
        long now = clock.millis();
        long[] last = unguardedWarned.computeIfAbsent(op.name(), k -> new long[] {-1, Long.MIN_VALUE});
        boolean warn;
        synchronized (last) {
            // an opening of the circuit warns once; failures that reach the store (no breaker, or before it opens)
            // at most once a minute
            warn = opening >= 0 ? opening != last[0] : now - last[1] >= 60_000 || last[1] == Long.MIN_VALUE;
            if (warn && opening >= 0) {
                last[0] = opening;
            } else if (warn) {
                last[1] = now;
            }
        }
        if (warn) {
            LOG.log(System.Logger.Level.WARNING, op.description() + " runs UNGUARDED (onStoreDown ="
                    + " PROCEED_UNGUARDED): the idempotency store is unavailable, so its calls may run twice and"
                    + " nothing is recorded for them; logged once per outage, counted as outcome 'unguarded'",
                    failure);
        }
    }

    /** Builds an {@link IdempotentExecutor}. */
    public static final class Builder {
        private final IdempotencyStore store;
        private @Nullable ResultCodec codec;
        private @Nullable JsonMapper mapper;
        private Clock clock = Clock.systemUTC();
        private IdempotencyScope scope = IdempotencyScope.NONE;
        private final List<IdempotencyListener> listeners = new ArrayList<>();
        private TransactionBridge transactions = TransactionBridge.NONE;
        private @Nullable ConfirmationGate gate;
        private @Nullable IdempotencyAudit attempts;
        private IdempotencyObserver observer = IdempotencyObserver.NONE;
        private int maxWaitersPerKey = DEFAULT_MAX_WAITERS_PER_KEY;

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** Encodes results with this codec instead of Jackson on the default mapper. */
        public Builder codec(ResultCodec codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /** Encodes results and fingerprints arguments with the application's mapper. */
        public Builder jsonMapper(JsonMapper mapper) {
            this.mapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        /** The clock of leases and expiries; inject one in tests. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Mixes a tenant or principal into every key's identity. */
        public Builder scope(IdempotencyScope scope) {
            this.scope = Objects.requireNonNull(scope, "scope");
            return this;
        }

        /** Adds a listener of outcomes. */
        public Builder listener(IdempotencyListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /** How the caller's transaction is seen (the Spring module supplies one). */
        public Builder transactions(TransactionBridge transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            return this;
        }

        /** Consulted before the first execution of an irreversible call. */
        public Builder confirmationGate(ConfirmationGate gate) {
            this.gate = Objects.requireNonNull(gate, "gate");
            return this;
        }

        /**
         * Records, in {@code audit}, the attempts that meet a key in trouble ({@link IdempotencyAudit.Attempt}: a
         * retry refused as in progress, as held for review or for other arguments, a stale claim taken over, a key
         * held for review), for an operator to read beside the key ({@link IdempotencyAdmin#attempts}); give the
         * admin's audit. A plain first run and a replay write nothing. A refusal or a hold is recorded outside the
         * caller's transaction (it must outlive the rollback that usually follows), a takeover in it (it rolls back
         * with the takeover); a failure to record is logged and the call goes on. By default nothing is recorded.
         */
        public Builder attempts(IdempotencyAudit audit) {
            this.attempts = Objects.requireNonNull(audit, "audit");
            return this;
        }

        /** Wraps every call (a tracing span, a Micrometer {@code Observation}); by default none. */
        public Builder observer(IdempotencyObserver observer) {
            this.observer = Objects.requireNonNull(observer, "observer");
            return this;
        }

        /**
         * How many callers of one key may be in an executor at once on this node (one talks to the store, the others
         * wait in memory for their turn); the next is refused at once with {@link IdempotencyInProgressException}.
         * Keep it below the connection pool's size: inside {@code @Transactional} every waiting caller holds a
         * pooled connection. Default {@value #DEFAULT_MAX_WAITERS_PER_KEY}.
         */
        public Builder maxWaitersPerKey(int maxWaitersPerKey) {
            if (maxWaitersPerKey < 1) {
                throw new IllegalArgumentException("maxWaitersPerKey must be at least 1, was " + maxWaitersPerKey);
            }
            this.maxWaitersPerKey = maxWaitersPerKey;
            return this;
        }

        public IdempotentExecutor build() {
            return new IdempotentExecutor(this);
        }
    }
}
