package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotentExecutor.Action;
import dev.idempotency.IdempotentExecutor.Compensation;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.CircuitOpenException;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Attempt;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One call of an {@link IdempotentExecutor} in progress, and the state that its steps share: the state machine of
 * {@code docs/engine.md}. Prepare the key ({@link #prepareKey}: the call's {@link CallIdentity}), decide in the claim
 * phase ({@link #decide}: the pre-filter, the key's gate, {@link #awaitClaim} with {@link Claiming}), then run as the
 * owner ({@link Owning}), replay ({@link Replaying}) or run unguarded ({@link #runUnguarded}); the owner settles its
 * claim ({@link Settling}) now or after the caller's transaction ends.
 */
final class IdempotentCall<T, E extends Throwable> implements IdempotencyObserver.Invocation<T, E> {
    private static final System.Logger LOG = System.getLogger(IdempotentExecutor.class.getName());
    private static final long FIRST_POLL_NANOS = Duration.ofMillis(5).toNanos();
    private static final long MAX_POLL_NANOS = Duration.ofMillis(250).toNanos();

    /** The executor: its store, codec, clock, transactions, listeners, and the gates of its keys. */
    final IdempotentExecutor engine;
    final IdempotentOperation<T> op;
    /** The call's arguments, never null. */
    final Object[] arguments;
    final Action<T, E> action;
    final @Nullable Compensation<T> compensation;
    private final String key;
    /** The call's own scope (given to {@code execute}), or null for the executor's {@link IdempotencyScope}. */
    private final @Nullable String scope;
    private long start;
    private boolean started;
    private @Nullable Outcome outcome;
    private long claimNanos;
    /** Who the call is: set once, by {@link #prepareKey} or {@link #replays}, before any step reads it. */
    private @Nullable CallIdentity identity;
    /** The completed outcome the pre-filter held ({@link IdempotentExecutor#replayHeldOr}): replayed, nothing else. */
    private @Nullable IdempotencyRecord held;
    /** The request of the latest claim or takeover: once acquired, its lease identifies our claim. */
    private @Nullable ClaimRequest claim;
    /**
     * Whether the claim and the outcome are written outside the caller's transaction, committed on their own:
     * {@link Tier#IRREVERSIBLE} calls, whose intent to act must be durable before the effect, whatever the
     * caller's transaction does later.
     */
    private boolean independent;

    IdempotentCall(IdempotentExecutor engine, IdempotentOperation<T> op, @Nullable String scope, String key,
            Object[] arguments, Action<T, E> action, @Nullable Compensation<T> compensation) {
        this.engine = engine;
        this.op = op;
        this.scope = scope;
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
        if (held != null) {
            claimNanos = System.nanoTime() - start;
            return Replaying.replay(this, held, true);
        }
        prepareKey();
        return execute();
    }

    /** Makes this call the replay of {@code record}, which the pre-filter held for {@code identity}. */
    void replays(IdempotencyRecord record, CallIdentity identity) {
        this.held = record;
        this.identity = identity;
    }

    @Override
    public Optional<Outcome> outcome() {
        return Optional.ofNullable(outcome);
    }

    /** Who the call is, once its key is prepared. */
    CallIdentity identity() {
        return Objects.requireNonNull(identity, "identity");
    }

    /** Publishes the call's outcome: to the open {@link IdempotencyContext} scopes and the listeners. */
    void publish(Outcome published) {
        outcome = published;
        engine.publish(op, identity().readable(), published, claimNanos, start);
    }

    /** Publishes {@code outcome} and returns {@code exception}, for the caller to throw. */
    <X extends RuntimeException> X fail(Outcome outcome, X exception) {
        publish(outcome);
        return exception;
    }

    /**
     * Works out the call's {@link CallIdentity}; a key, scope or argument that is refused fails the call, published
     * with the key as far as it could be read.
     */
    private void prepareKey() {
        String readable = "";
        boolean normalized = false;
        byte[] keyHash;
        try {
            engine.prepare(op);
            String normal = Keys.normalize(key);
            readable = Keys.readableNormalized(normal);
            normalized = true;
            String tenant = scope != null ? scope : engine.scope.current();
            if (tenant == null) {
                throw new IllegalArgumentException("the IdempotencyScope returned null (return \"\" for none)");
            }
            keyHash = Keys.hash(op.name(), tenant, normal);
        } catch (RuntimeException e) {
            if (!normalized) {
                // refused (or not checked): the key as people may see it, escaped where it needs to be
                readable = key == null ? "" : Keys.readable(key);
            }
            refused(readable);
            throw e instanceof IllegalArgumentException
                    ? new IdempotencyKeyException(op.description() + ": " + e.getMessage(), e) : e;
        }
        byte[] fingerprint;
        try {
            fingerprint = engine.fingerprints.fingerprint(this.arguments, op::isIgnored);
        } catch (IllegalArgumentException e) {
            refused(readable);
            throw new IdempotencyException(op.description() + ": " + e.getMessage(), e);
        }
        this.identity = new CallIdentity(op.name(), readable, keyHash, fingerprint);
    }

    /** Publishes a call refused before it has an identity, under the key as far as it could be read. */
    private void refused(String readable) {
        outcome = Outcome.FAILED;
        engine.publish(op, readable, Outcome.FAILED, 0, start);
    }

    private ClaimRequest request(Instant now) {
        CallIdentity id = identity();
        long remaining = Math.max(0, op.lockTimeout().toNanos() - (System.nanoTime() - start));
        return new ClaimRequest(id.keyHash(), id.operation(), id.readable(), id.fingerprint(), op.tier(), now,
                millis(now.plus(op.lease())), millis(now.plus(op.ttl())), Duration.ofNanos(remaining));
    }

    T execute() throws E {
        Decision decision = decide();
        if (decision instanceof Decision.Acquired acquired) {
            return new Owning<>(this, Objects.requireNonNull(claim), acquired.transactional()).run();
        }
        if (decision instanceof Decision.Replay replay) {
            return Replaying.replay(this, replay.record(), replay.cached());
        }
        return runUnguarded(((Decision.Unguarded) decision).failure());
    }

    /**
     * The claim phase: refuses a claim in a read-only transaction, replays what the pre-filter holds, and
     * otherwise takes the key's turn at its gate and claims it ({@link #awaitClaim}), out of the gate again
     * before anything runs.
     */
    private Decision decide() {
        CallIdentity id = identity();
        String readable = id.readable();
        independent = op.tier() == Tier.IRREVERSIBLE;
        if (engine.transactions.isTransactionActive() && engine.transactions.isReadOnly()) {
            throw fail(Outcome.FAILED, new IdempotencyException(op.description() + ": cannot claim idempotency"
                    + " key '" + readable + "' inside a read-only transaction: the claim and the result are"
                    + " writes. Drop readOnly = true from the surrounding @Transactional, or call this method"
                    + " outside it"));
        }
        if (engine.inMemory != null) {
            // a completed outcome held in memory is replayed at once: it claims nothing, runs nothing and waits
            // for no one, so it needs no claim request and no turn at the key's gate; what the store's claim
            // would answer for it is the same record (a payload mismatch goes the usual way, and is refused there)
            IdempotencyRecord hit = engine.inMemory.completed(id.keyHash());
            if (hit != null && Arrays.equals(hit.fingerprint(), id.fingerprint())) {
                claimNanos = System.nanoTime() - start;
                return new Decision.Replay(hit, true);
            }
        }
        long deadline = start + op.lockTimeout().toNanos();
        KeyGates.Entry entry = engine.gates.enter(id.keyHash());
        if (entry == null) {
            // not recorded: this refusal sheds load when too many callers crowd one key, and a write (on a
            // connection of its own) for each of them would add to the load it sheds
            throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                    "idempotency key '" + readable + "' of operation " + op.name() + " already has "
                    + engine.maxWaitersPerKey + " callers waiting on this node; retry later", null));
        }
        try (entry) {
            // the callers of one key take turns with the store; the others wait here, holding nothing there
            if (!entry.awaitTurn(deadline - System.nanoTime())) {
                attempt(Attempt.Kind.REFUSED_IN_PROGRESS, Status.IN_FLIGHT, "other callers of the key on this node"
                        + " held it past the lock timeout of " + op.lockTimeout(), false);
                throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                        op.lockTimeout()));
            }
            // out of the key's gate before the method runs (or runs unguarded, holding nothing of the key)
            return awaitClaim(deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                    "interrupted while waiting for another attempt with idempotency key '" + readable + "'", e));
        } catch (StoreFailedUnguarded e) {
            return new Decision.Unguarded(e.failure);
        }
    }

    /**
     * Claims the key, waiting for an owner in flight: returns once the key is ours (acquired) or holds a
     * completed outcome to replay; throws for every other answer (in progress, reused, unknown outcome), and
     * {@link StoreFailedUnguarded} when the store fails and the operation proceeds unguarded.
     */
    private Decision awaitClaim(long deadline) {
        CallIdentity id = identity();
        String readable = id.readable();
        long pause = FIRST_POLL_NANOS;
        ClaimResult result = claim();
        claimNanos = System.nanoTime() - start;
        // a record the store's clock says is still live although ours says it is over (Claiming.next)
        IdempotencyRecord liveByStore = null;
        while (true) {
            Instant now = now();
            long left = deadline - System.nanoTime();
            switch (Claiming.next(result, now, op.tier(), id.fingerprint(), liveByStore, left)) {
                case ACQUIRED:
                    return Decision.Acquired.of(result.isTransactional());
                case REPLAY:
                    return new Decision.Replay(Objects.requireNonNull(result.record()), result.isCached());
                case IN_PROGRESS:
                    attempt(Attempt.Kind.REFUSED_IN_PROGRESS, Status.IN_FLIGHT, "another attempt held the key in"
                            + " flight past the lock timeout of " + op.lockTimeout(), false);
                    throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                            op.lockTimeout()));
                case KEY_REUSED: {
                    IdempotencyRecord record = Objects.requireNonNull(result.record());
                    attempt(Attempt.Kind.KEY_REUSED, record.status(), "its arguments' digest "
                            + HexFormat.of().formatHex(id.fingerprint()) + " differs from the key's "
                            + HexFormat.of().formatHex(record.fingerprint()), false);
                    throw fail(Outcome.KEY_REUSED, new IdempotencyKeyReusedException(op.name(), readable));
                }
                case OUTCOME_UNKNOWN:
                    attempt(Attempt.Kind.REFUSED_HELD, Status.NEEDS_REVIEW, "", false);
                    throw fail(Outcome.OUTCOME_UNKNOWN,
                            new IdempotencyOutcomeUnknownException(op.name(), readable));
                case TAKE_OVER: {
                    // an outcome past its ttl, or a reversible attempt that crashed: exactly one contender takes
                    // it over
                    IdempotencyRecord record = Objects.requireNonNull(result.record());
                    ClaimRequest takeOver = request(now);
                    claim = takeOver;
                    result = store(() -> onStore(() -> engine.store.takeOver(takeOver, record)));
                    if (result.isAcquired() && record.status() == Status.IN_FLIGHT) {
                        // written where the takeover was: in the caller's transaction, it rolls back with it
                        attempt(Attempt.Kind.TOOK_OVER_STALE, Status.IN_FLIGHT, "the claim of "
                                + record.createdAt() + ", whose lease ran out at " + record.leaseUntil(),
                                !independent && result.isTransactional());
                    }
                    liveByStore = Claiming.liveByStore(record, result, liveByStore);
                    break;
                }
                case HOLD_STALE: {
                    // IRREVERSIBLE: the side effect may have happened; stop for a human rather than run it twice
                    IdempotencyRecord record = Objects.requireNonNull(result.record());
                    Instant lease = record.leaseUntil();
                    byte[] keyHash = id.keyHash();
                    if (store(() -> outside(() -> engine.store.markNeedsReviewIfStale(keyHash, lease, now)))) {
                        attempt(Attempt.Kind.HELD_STALE, Status.IN_FLIGHT, "the claim of " + record.createdAt()
                                + ", whose lease ran out at " + lease + ": its attempt may have acted", false);
                        throw fail(Outcome.OUTCOME_UNKNOWN,
                                new IdempotencyOutcomeUnknownException(op.name(), readable));
                    }
                    result = reread();
                    liveByStore = Claiming.liveByStore(record, result, liveByStore);
                    break;
                }
                case WAIT:
                    sleep(Math.min(pause, left));
                    pause = Math.min(pause * 2, MAX_POLL_NANOS);
                    liveByStore = null;
                    result = reread();
                    break;
            }
        }
    }

    private ClaimResult claim() {
        ClaimRequest request = request(now());
        claim = request;
        // what store(() -> onStore(() -> store.claim(request))) does, without two lambdas on every call
        try {
            return independent ? outside(() -> engine.store.claim(request)) : engine.store.claim(request);
        } catch (RuntimeException e) {
            throw storeFailure(e);
        }
    }

    /**
     * Reads the key again while waiting: outside the caller's transaction, so that the read sees the latest
     * committed state rather than the transaction's snapshot, and holds no lock that the owner needs to finish.
     */
    private ClaimResult reread() {
        Optional<IdempotencyRecord> again = store(() -> outside(() -> engine.store.find(identity().keyHash())));
        return again.isPresent() ? ClaimResult.existing(again.get()) : claim();
    }

    /** A claim or takeover: in the caller's transaction when the store can join it, unless independent. */
    private <R> R onStore(Supplier<R> work) {
        return independent ? outside(work) : work.get();
    }

    private <R> R outside(Supplier<R> work) {
        return engine.transactions.outside(work);
    }

    private <R> R store(Supplier<R> operation) {
        try {
            return operation.get();
        } catch (RuntimeException e) {
            throw storeFailure(e);
        }
    }

    /** What a failure of the store while claiming or reading the key is thrown as (and publishes). */
    private RuntimeException storeFailure(RuntimeException e) {
        String readable = identity().readable();
        if (e instanceof IdempotencyInProgressException) {
            // a store that cannot wait any longer in this transaction (a snapshot that cannot see the winner)
            return fail(Outcome.IN_PROGRESS, e);
        }
        if (e instanceof IdempotencyException) {
            return fail(Outcome.FAILED, e);
        }
        if (e instanceof CallerTransactionAborted) {
            // the database already rolled the caller's transaction back (or it can never see the outcome):
            // nothing of it may commit now, and only a retry of the whole transaction can go on
            engine.transactions.setRollbackOnly();
            return fail(Outcome.FAILED, e);
        }
        IdempotencyStoreException failure = new IdempotencyStoreException(op.description()
                + (e instanceof CircuitOpenException open && !open.storeAsked()
                ? ": the idempotency store is unavailable (its circuit is open) for key '"
                : ": the idempotency store failed for key '") + readable + "'", false, e);
        if (op.onStoreDown() == StoreDown.PROCEED_UNGUARDED) {
            return new StoreFailedUnguarded(failure);
        }
        return fail(Outcome.FAILED, failure);
    }

    /**
     * The claim could not be made because the store is unavailable, and the operation proceeds unguarded: the
     * method runs with no claim and nothing is recorded; a compensation still undoes it if the caller's
     * transaction rolls back after it returned, and an exception still marks that transaction rollback-only.
     */
    private T runUnguarded(IdempotencyStoreException failure) throws E {
        engine.warnUnguarded(op, failure);
        boolean inTransaction = engine.transactions.isTransactionActive();
        IdempotencyContext.Call previous =
                IdempotencyContext.enter(new IdempotencyContext.Call(op.name(), identity().readable()));
        T value;
        try {
            value = action.run();
        } catch (Throwable t) {
            if (inTransaction) {
                engine.transactions.setRollbackOnly();
            }
            t.addSuppressed(failure);
            publish(Outcome.FAILED);
            throw t;
        } finally {
            IdempotencyContext.exit(previous);
        }
        if (compensation != null && inTransaction) {
            compensateOnRollback(value);
        }
        publish(Outcome.UNGUARDED);
        return value;
    }

    /**
     * Publishes EXECUTED once the caller's transaction commits, ROLLED_BACK if it (or the savepoint) rolls back:
     * to the listeners and the open {@link IdempotencyContext} scopes. With neither, there is no one to tell, and
     * no callback is registered (with Spring, a synchronization costs some 400 bytes per call).
     */
    void publishWithCommit() {
        outcome = Outcome.EXECUTED;
        if (engine.listeners.isEmpty() && !IdempotencyContext.collecting()) {
            return;
        }
        engine.transactions.afterCompletion(completion -> publish(published(completion)));
    }

    /** Registers the compensation of {@code value}, run if the caller's transaction rolls back. */
    void compensateOnRollback(T value) {
        engine.transactions.afterCompletion(completion -> {
            if (completion == TransactionBridge.Completion.ROLLED_BACK) {
                compensate(value);
            }
        });
    }

    /** Undoes the external effect of an attempt whose transaction rolled back after the method returned. */
    private void compensate(T value) {
        if (compensation == null) {
            return;
        }
        try {
            compensation.compensate(value);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.ERROR, "the compensation of " + op.name() + " key '" + identity().readable()
                    + "' failed after its transaction rolled back; the external effect may remain", e);
        }
    }

    /**
     * Records this attempt in the executor's audit ({@link IdempotentExecutor.Builder#attempts}), if it has one:
     * in the caller's transaction when {@code inTransaction} (the write it records was made there and rolls back
     * with it), otherwise outside it, so that it outlives the rollback that usually follows a refusal. Never throws:
     * the call's own outcome matters more than its record.
     */
    void attempt(Attempt.Kind kind, Status met, String detail, boolean inTransaction) {
        IdempotencyAudit audit = engine.attempts;
        if (audit == null) {
            return;
        }
        Attempt attempt = new Attempt(op.name(), identity().readable(), op.tier(), met, kind, detail, now());
        try {
            if (inTransaction) {
                audit.attempt(identity().keyHash(), attempt);
            } else {
                outside(() -> {
                    audit.attempt(identity().keyHash(), attempt);
                    return null;
                });
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not record the attempt " + attempt + " in " + audit, e);
        }
    }

    private void sleep(long nanos) {
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            String readable = identity().readable();
            throw fail(Outcome.IN_PROGRESS, new IdempotencyInProgressException(op.name(), readable,
                    "interrupted while waiting for another attempt with idempotency key '" + readable + "'", e));
        }
    }

    /** The clock's instant in whole milliseconds (as {@link #millis} truncates it), made as one instant. */
    Instant now() {
        return Instant.ofEpochMilli(engine.clock.millis());
    }

    /**
     * Every instant handed to a store is whole milliseconds, which every supported database stores exactly: a lease
     * read back then equals the lease written, and the conditional writes that match on it find their row.
     */
    static Instant millis(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MILLIS);
    }

    /**
     * A store failure while claiming, on an operation that proceeds unguarded: it leaves the store calls of the claim
     * loop, and {@code decide} alone catches it and turns it into {@link Decision.Unguarded}.
     */
    private static final class StoreFailedUnguarded extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final IdempotencyStoreException failure;

        StoreFailedUnguarded(IdempotencyStoreException failure) {
            super(failure.getMessage(), failure, false, false);
            this.failure = failure;
        }
    }

    /** The outcome published for a call whose outcome waited for the caller's transaction to end so. */
    static Outcome published(TransactionBridge.Completion completion) {
        return switch (completion) {
            case COMMITTED -> Outcome.EXECUTED;
            case ROLLED_BACK -> Outcome.ROLLED_BACK;
            case UNKNOWN -> Outcome.OUTCOME_UNKNOWN;
        };
    }
}
