package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.Fingerprints;
import dev.idempotency.internal.Keys;
import dev.idempotency.internal.RecordedExceptions;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.lang.reflect.Type;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * The engine: one idempotent call from key to recorded outcome (CONTRACT §3). The Spring aspect drives it for
 * {@link Idempotent} methods; message listeners, MCP tool handlers and non-Spring code call it directly:
 *
 * <pre>{@code
 * IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
 * IdempotentOperation<Receipt> refund = IdempotentOperation
 *     .builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Receipt.class)).ttl("7d").build();
 * Receipt r = executor.execute(refund, "REFUND:" + refundId, new Object[] {refundId, amount},
 *     () -> gateway.refund(refundId, amount));
 * }</pre>
 *
 * <p>Thread-safe; build one and share it.
 */
public final class IdempotentExecutor {

    private static final System.Logger LOG = System.getLogger(IdempotentExecutor.class.getName());
    private static final long FIRST_POLL_NANOS = Duration.ofMillis(5).toNanos();
    private static final long MAX_POLL_NANOS = Duration.ofMillis(250).toNanos();

    private final IdempotencyStore store;
    private final ResultCodec codec;
    private final Fingerprints fingerprints;
    private final Clock clock;
    private final IdempotencyScope scope;
    private final List<IdempotencyListener> listeners;
    private final TransactionBridge transactions;
    private final @Nullable ConfirmationGate gate;
    private final IdempotencyObserver observer;
    private final Set<Type> replayableTypes = ConcurrentHashMap.newKeySet();

    private IdempotentExecutor(Builder b) {
        this.store = b.store;
        JsonMapper mapper = b.mapper != null ? b.mapper : JacksonResultCodec.defaultMapper();
        this.codec = b.codec != null ? b.codec : JacksonResultCodec.using(mapper);
        this.fingerprints = new Fingerprints(mapper);
        this.clock = b.clock;
        this.scope = b.scope;
        this.listeners = List.copyOf(b.listeners);
        this.transactions = b.transactions;
        this.gate = b.gate;
        this.observer = b.observer;
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
        if (operation.tier() == Tier.READ_ONLY) {
            return action.run();
        }
        if (compensation != null && operation.tier() != Tier.REVERSIBLE) {
            throw new IllegalArgumentException(operation.description() + ": only REVERSIBLE operations compensate, "
                    + "this one is " + operation.tier());
        }
        Call<T, E> call = new Call<>(operation, key, arguments, action, compensation);
        return observer == IdempotencyObserver.NONE ? call.proceed() : observer.around(operation, call);
    }

    private Instant now() {
        return millis(clock.instant());
    }

    /**
     * Every instant handed to a store is whole milliseconds, which every supported database stores exactly: a lease
     * read back then equals the lease written, and the conditional writes that match on it find their row.
     */
    private static Instant millis(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MILLIS);
    }

    private void publish(IdempotentOperation<?> op, String key, Outcome outcome, long claimNanos, long startNanos) {
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

    /** One call in progress: the state that every step shares. */
    private final class Call<T, E extends Throwable> implements IdempotencyObserver.Invocation<T, E> {
        private final IdempotentOperation<T> op;
        private final Object[] arguments;
        private final Action<T, E> action;
        private final @Nullable Compensation<T> compensation;
        private final String key;
        private long start;
        private boolean started;
        private @Nullable Outcome outcome;
        private long claimNanos;
        private String readable = "";
        private byte[] keyHash;
        private byte[] fingerprint;

        Call(IdempotentOperation<T> op, String key, Object[] arguments, Action<T, E> action,
                @Nullable Compensation<T> compensation) {
            this.op = op;
            this.compensation = compensation;
            this.arguments = arguments == null ? new Object[0] : arguments;
            this.action = action;
            this.key = key;
        }

        @Override
        public T proceed() throws E {
            if (started) {
                throw new IllegalStateException("an idempotent call proceeds only once: " + op.name());
            }
            started = true;
            start = System.nanoTime();
            prepareKey();
            return execute();
        }

        @Override
        public Optional<Outcome> outcome() {
            return Optional.ofNullable(outcome);
        }

        private void publish(Outcome published, long claim) {
            outcome = published;
            IdempotentExecutor.this.publish(op, readable, published, claim, start);
        }

        private void prepareKey() {
            this.readable = key == null ? "" : Keys.readable(key);
            try {
                prepare(op);
                String normalized = Keys.normalize(key);
                this.readable = Keys.readable(normalized);
                String tenant = scope.current();
                if (tenant == null) {
                    throw new IllegalArgumentException("the IdempotencyScope returned null (return \"\" for none)");
                }
                this.keyHash = Keys.hash(op.name(), tenant, normalized);
            } catch (IllegalArgumentException e) {
                publish(Outcome.FAILED, 0);
                throw new IdempotencyKeyException(op.description() + ": " + e.getMessage(), e);
            } catch (RuntimeException e) {
                publish(Outcome.FAILED, 0);
                throw e;
            }
            try {
                this.fingerprint = fingerprints.fingerprint(this.arguments, op::isIgnored);
            } catch (IllegalArgumentException e) {
                publish(Outcome.FAILED, 0);
                throw new IdempotencyException(op.description() + ": " + e.getMessage(), e);
            }
        }

        private ClaimRequest request(Instant now) {
            long remaining = Math.max(0, op.lockTimeout().toNanos() - (System.nanoTime() - start));
            return new ClaimRequest(keyHash, op.name(), readable, fingerprint, op.tier(), now,
                    millis(now.plus(op.lease())), millis(now.plus(op.ttl())), Duration.ofNanos(remaining));
        }

        T execute() throws E {
            long deadline = start + op.lockTimeout().toNanos();
            long pause = FIRST_POLL_NANOS;
            ClaimResult result = claim();
            claimNanos = System.nanoTime() - start;
            while (true) {
                switch (result.kind()) {
                    case ACQUIRED:
                        return run(result.isTransactional());
                    case LOCK_TIMEOUT:
                        throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                                op.lockTimeout()));
                    default:
                        break;
                }
                IdempotencyRecord record = result.record();
                Instant now = now();
                if (record.isExpired(now) || (record.isStale(now) && op.tier() == Tier.REVERSIBLE
                        && Arrays.equals(record.fingerprint(), fingerprint))) {
                    // an outcome past its ttl, or a reversible attempt that crashed: exactly one contender takes over
                    ClaimRequest takeOver = request(now);
                    claim = takeOver;
                    result = store(() -> store.takeOver(takeOver, record));
                    continue;
                }
                if (!Arrays.equals(record.fingerprint(), fingerprint)) {
                    throw fail(Outcome.KEY_REUSED, new IdempotencyKeyReusedException(op.name(), readable));
                }
                switch (record.status()) {
                    case COMPLETED:
                        return replay(record, result.isCached());
                    case NEEDS_REVIEW:
                        throw fail(Outcome.OUTCOME_UNKNOWN,
                                new IdempotencyOutcomeUnknownException(op.name(), readable));
                    default:
                        break;
                }
                if (record.isStale(now)) {
                    // IRREVERSIBLE: the side effect may have happened; stop for a human rather than run it twice
                    if (store(() -> store.markNeedsReview(keyHash, record.leaseUntil()))) {
                        throw fail(Outcome.OUTCOME_UNKNOWN,
                                new IdempotencyOutcomeUnknownException(op.name(), readable));
                    }
                    result = reread();
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                            op.lockTimeout()));
                }
                sleep(Math.min(pause, left));
                pause = Math.min(pause * 2, MAX_POLL_NANOS);
                result = reread();
            }
        }

        /** The request of the latest claim or takeover: once acquired, its lease identifies our claim. */
        private ClaimRequest claim;

        private ClaimResult claim() {
            ClaimRequest request = request(now());
            claim = request;
            return store(() -> store.claim(request));
        }

        private ClaimResult reread() {
            Optional<IdempotencyRecord> again = store(() -> store.find(keyHash));
            return again.isPresent() ? ClaimResult.existing(again.get()) : claim();
        }

        private <R> R store(Supplier<R> operation) {
            try {
                return operation.get();
            } catch (IdempotencyInProgressException e) {
                // a store that cannot wait any longer in this transaction (a snapshot that cannot see the winner)
                throw fail(Outcome.IN_PROGRESS, e);
            } catch (IdempotencyException e) {
                throw fail(Outcome.FAILED, e);
            } catch (RuntimeException e) {
                throw fail(Outcome.FAILED, new IdempotencyStoreException(op.description()
                        + ": the idempotency store failed for key '" + readable + "'", false, e));
            }
        }

        private <X extends RuntimeException> X fail(Outcome outcome, X exception) {
            publish(outcome, claimNanos);
            return exception;
        }

        private T replay(IdempotencyRecord record, boolean cached) {
            byte[] data = record.result();
            if (data == null) {
                throw fail(Outcome.FAILED, new IdempotencyReplayException(op.description()
                        + ": the completed record of key '" + readable + "' holds no result"));
            }
            if (RecordedExceptions.isException(data)) {
                Throwable recorded = recordedException(data);
                publish(cached ? Outcome.REPLAYED_CACHED : Outcome.REPLAYED, claimNanos);
                throw IdempotentExecutor.<RuntimeException>sneaky(recorded);
            }
            Object value;
            try {
                value = codec.decode(data, op.resultType().type());
            } catch (IdempotencyReplayException e) {
                throw fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                        + "': " + e.getMessage(), e));
            }
            publish(cached ? Outcome.REPLAYED_CACHED : Outcome.REPLAYED, claimNanos);
            @SuppressWarnings("unchecked")
            T t = (T) value;
            return t;
        }

        /**
         * A new instance of the recorded exception: only a class among the operation's declared replayExceptions,
         * through its public (String) constructor; anything else in the row is an IdempotencyReplayException.
         */
        private Throwable recordedException(byte[] data) {
            RecordedExceptions.Recorded recorded;
            try {
                recorded = RecordedExceptions.decode(data);
            } catch (IllegalArgumentException e) {
                throw fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                        + "': " + e.getMessage() + " (was the row changed?)", e));
            }
            Class<? extends Throwable> type = op.replayExceptionNamed(recorded.exception());
            if (type == null) {
                throw fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                        + "' recorded the exception " + recorded.exception() + ", which is not among the operation's"
                        + " replayExceptions " + op.replayExceptions().stream().map(Class::getName).toList()
                        + " (was the row changed, or the list since?)"));
            }
            try {
                return type.getConstructor(String.class).newInstance(recorded.message());
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                        + "': cannot make a new " + type.getName() + " through its (String) constructor", e));
            }
        }

        /**
         * Records a declared business exception as the call's outcome, by the same path as a value: now, or after
         * the caller's commit when the store cannot join its transaction. A failure to record is added to the
         * business exception, which the caller gets either way.
         */
        private void recordException(ClaimRequest owned, boolean transactional, Class<? extends Throwable> type,
                Throwable thrown) {
            byte[] data = RecordedExceptions.encode(type, thrown.getMessage());
            try {
                recordOnCommit(owned, transactional, transactions.isTransactionActive(), data);
            } catch (IdempotencyException e) {
                thrown.addSuppressed(e);
                return;
            }
            publish(Outcome.EXECUTED, claimNanos);
        }

        private T run(boolean transactional) throws E {
            ClaimRequest owned = claim;
            if (gate != null && op.tier() == Tier.IRREVERSIBLE) {
                try {
                    gate.check(new ConfirmationGate.Call(op.name(), readable, Arrays.asList(arguments)));
                } catch (RuntimeException e) {
                    release(owned, e);
                    throw fail(e instanceof ConfirmationRequiredException ? Outcome.CONFIRMATION_REQUIRED
                            : Outcome.FAILED, e);
                }
            }
            IdempotencyContext.Call previous = IdempotencyContext.enter(new IdempotencyContext.Call(op.name(), readable));
            T value;
            try {
                value = action.run();
            } catch (Throwable t) {
                Class<? extends Throwable> recordedAs = op.recordedAs(t);
                if (recordedAs != null) {
                    // opt-in: this exception is the call's outcome, replayed like a value
                    recordException(owned, transactional, recordedAs, t);
                    throw t;
                }
                release(owned, t);
                publish(Outcome.FAILED, claimNanos);
                throw t;
            } finally {
                IdempotencyContext.exit(previous);
            }
            boolean inTransaction = transactions.isTransactionActive();
            if (compensation != null && inTransaction) {
                // registered before anything else can fail: whatever rolls the transaction back after the method
                // returned (recording the result included), the external effect is undone, before the key is
                // released to a retry
                transactions.afterCompletion(completion -> {
                    if (completion == TransactionBridge.Completion.ROLLED_BACK) {
                        compensate(value);
                    }
                });
            }
            byte[] data;
            try {
                data = codec.encode(value, op.resultType().type());
                ResultSize.check(op, data);
                if (RecordedExceptions.isException(data)) {
                    throw new IdempotencyReplayException(op.description() + ": the result codec wrote a value"
                            + " starting with the byte 0x00, which marks a recorded exception; a ResultCodec must"
                            + " never write it");
                }
            } catch (RuntimeException e) {
                if (op.tier() == Tier.IRREVERSIBLE && !transactional) {
                    // the side effect happened and cannot be replayed: releasing would let a retry do it twice
                    holdForReview(owned, e);
                } else {
                    release(owned, e);
                }
                throw fail(Outcome.FAILED, e instanceof IdempotencyReplayException ? e
                        : new IdempotencyReplayException(op.description() + ": cannot record the result", e));
            }
            recordOnCommit(owned, transactional, inTransaction, data);
            publish(Outcome.EXECUTED, claimNanos);
            return value;
        }

        /**
         * Records an outcome (a value or a declared exception) with the commit of the caller's transaction: at once
         * when the claim lives in that transaction (it commits with it) or there is none; otherwise after the
         * transaction ends, so that no duplicate replays an outcome whose writes are then rolled back (a rollback
         * releases the key instead).
         */
        private void recordOnCommit(ClaimRequest owned, boolean transactional, boolean inTransaction, byte[] data) {
            if (transactional || !inTransaction) {
                record(owned, data, millis(now().plus(op.ttl())));
                return;
            }
            transactions.afterCompletion(completion -> {
                boolean committed = completion == TransactionBridge.Completion.COMMITTED;
                try {
                    if (committed) {
                        record(owned, data, millis(now().plus(op.ttl())));
                    } else {
                        store.release(owned.keyHash(), owned.leaseUntil());
                    }
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "could not " + (committed ? "record" : "release")
                            + " the outcome of " + op.name() + " key '" + readable
                            + "' after the transaction ended; the claim stays in flight until its lease ends", e);
                }
            });
        }

        private void record(ClaimRequest owned, byte[] data, Instant expiresAt) {
            boolean recorded;
            try {
                recorded = store.complete(owned.keyHash(), owned.leaseUntil(), data, expiresAt);
            } catch (RuntimeException e) {
                throw fail(Outcome.FAILED, new IdempotencyStoreException(op.description()
                        + ": could not record the result of key '" + readable + "'", true, e));
            }
            if (!recorded) {
                throw fail(Outcome.FAILED, new IdempotencyStoreException(op.description() + ": the claim of key '"
                        + readable + "' was taken over or evicted before its result could be recorded"
                        + " (did the method outlive its lease of " + op.lease() + "?)", true, null));
            }
        }

        /** Undoes the external effect of an attempt whose transaction rolled back after the method returned. */
        private void compensate(T value) {
            if (compensation == null) {
                return;
            }
            try {
                compensation.compensate(value);
            } catch (Exception e) {
                LOG.log(System.Logger.Level.ERROR, "the compensation of " + op.name() + " key '" + readable
                        + "' failed after its transaction rolled back; the external effect may remain", e);
            }
        }

        /**
         * Keeps an irreversible call's committed claim blocked as {@code NEEDS_REVIEW} after it ran but its outcome
         * could not be recorded; a failure to do so is kept, not thrown (the lease then exposes the claim as stale,
         * which leads to the same review).
         */
        private void holdForReview(ClaimRequest owned, Throwable cause) {
            try {
                store.markNeedsReview(owned.keyHash(), owned.leaseUntil());
            } catch (RuntimeException e) {
                cause.addSuppressed(e);
            }
        }

        /** Gives the key back after a failure, so that a retry runs again; a failure to do so is kept, not thrown. */
        private void release(ClaimRequest owned, Throwable cause) {
            try {
                store.release(owned.keyHash(), owned.leaseUntil());
            } catch (RuntimeException e) {
                cause.addSuppressed(e);
            }
        }

        private void sleep(long nanos) {
            try {
                Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                        "interrupted while waiting for another attempt with idempotency key '" + readable + "'", e));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <X extends Throwable> X sneaky(Throwable t) throws X {
        throw (X) t;
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
        private IdempotencyObserver observer = IdempotencyObserver.NONE;

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

        /** Wraps every call (a tracing span, a Micrometer {@code Observation}); by default none. */
        public Builder observer(IdempotencyObserver observer) {
            this.observer = Objects.requireNonNull(observer, "observer");
            return this;
        }

        public IdempotentExecutor build() {
            return new IdempotentExecutor(this);
        }
    }
}
