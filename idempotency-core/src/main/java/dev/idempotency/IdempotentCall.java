package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotentExecutor.Action;
import dev.idempotency.IdempotentExecutor.Compensation;
import dev.idempotency.internal.Keys;
import dev.idempotency.internal.RecordedExceptions;
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
 * {@code docs/engine.md}. Prepare the key ({@link #prepareKey}), decide in the claim phase ({@link #decide}: the
 * pre-filter, the key's gate, {@link #awaitClaim} with {@link Claiming}), then run ({@link #run}), replay
 * ({@link #replay}) or run unguarded ({@link #runUnguarded}); an owner settles its claim ({@link Settling}) now or
 * after the caller's transaction ends ({@link #recordWithCommit}).
 */
final class IdempotentCall<T, E extends Throwable> implements IdempotencyObserver.Invocation<T, E> {
    private static final System.Logger LOG = System.getLogger(IdempotentExecutor.class.getName());
    private static final long FIRST_POLL_NANOS = Duration.ofMillis(5).toNanos();
    private static final long MAX_POLL_NANOS = Duration.ofMillis(250).toNanos();

    /** The executor: its store, codec, clock, transactions, listeners, and the gates of its keys. */
    private final IdempotentExecutor engine;
    private final IdempotentOperation<T> op;
    /** The call's arguments, never null. */
    final Object[] arguments;
    private final Action<T, E> action;
    private final @Nullable Compensation<T> compensation;
    private final String key;
    /** The call's own scope (given to {@code execute}), or null for the executor's {@link IdempotencyScope}. */
    private final @Nullable String scope;
    private long start;
    private boolean started;
    private @Nullable Outcome outcome;
    private long claimNanos;
    private String readable = "";
    private byte[] keyHash;
    private byte[] fingerprint;
    /** The completed outcome the pre-filter held ({@link IdempotentExecutor#replayHeldOr}): replayed, nothing else. */
    private @Nullable IdempotencyRecord held;

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
            return replay(held, true);
        }
        prepareKey();
        return execute();
    }

    /** Makes this call the replay of {@code record}, which the pre-filter held. */
    void replays(IdempotencyRecord record, String readableKey, byte[] hash, byte[] print) {
        this.held = record;
        this.readable = readableKey;
        this.keyHash = hash;
        this.fingerprint = print;
    }

    @Override
    public Optional<Outcome> outcome() {
        return Optional.ofNullable(outcome);
    }

    private void publish(Outcome published, long claim) {
        outcome = published;
        engine.publish(op, readable, published, claim, start);
    }

    private void prepareKey() {
        boolean normalized = false;
        try {
            engine.prepare(op);
            String normal = Keys.normalize(key);
            this.readable = Keys.readableNormalized(normal);
            normalized = true;
            String tenant = scope != null ? scope : engine.scope.current();
            if (tenant == null) {
                throw new IllegalArgumentException("the IdempotencyScope returned null (return \"\" for none)");
            }
            this.keyHash = Keys.hash(op.name(), tenant, normal);
        } catch (RuntimeException e) {
            if (!normalized) {
                // refused (or not checked): the key as people may see it, escaped where it needs to be
                this.readable = key == null ? "" : Keys.readable(key);
            }
            publish(Outcome.FAILED, 0);
            throw e instanceof IllegalArgumentException
                    ? new IdempotencyKeyException(op.description() + ": " + e.getMessage(), e) : e;
        }
        try {
            this.fingerprint = engine.fingerprints.fingerprint(this.arguments, op::isIgnored);
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
        Decision decision = decide();
        if (decision instanceof Decision.Acquired acquired) {
            return run(acquired.transactional());
        }
        if (decision instanceof Decision.Replay replay) {
            return replay(replay.record(), replay.cached());
        }
        return runUnguarded(((Decision.Unguarded) decision).failure());
    }

    /**
     * The claim phase: refuses a claim in a read-only transaction, replays what the pre-filter holds, and
     * otherwise takes the key's turn at its gate and claims it ({@link #awaitClaim}), out of the gate again
     * before anything runs.
     */
    private Decision decide() {
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
            IdempotencyRecord hit = engine.inMemory.completed(keyHash);
            if (hit != null && Arrays.equals(hit.fingerprint(), fingerprint)) {
                claimNanos = System.nanoTime() - start;
                return new Decision.Replay(hit, true);
            }
        }
        long deadline = start + op.lockTimeout().toNanos();
        KeyGates.Entry entry = engine.gates.enter(keyHash);
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
        long pause = FIRST_POLL_NANOS;
        ClaimResult result = claim();
        claimNanos = System.nanoTime() - start;
        // a record the store's clock says is still live although ours says it is over (Claiming.next)
        IdempotencyRecord liveByStore = null;
        while (true) {
            Instant now = now();
            long left = deadline - System.nanoTime();
            switch (Claiming.next(result, now, op.tier(), fingerprint, liveByStore, left)) {
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
                            + HexFormat.of().formatHex(fingerprint) + " differs from the key's "
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

    /** The request of the latest claim or takeover: once acquired, its lease identifies our claim. */
    private ClaimRequest claim;

    /**
     * Whether the claim and the outcome are written outside the caller's transaction, committed on their own:
     * {@link Tier#IRREVERSIBLE} calls, whose intent to act must be durable before the effect, whatever the
     * caller's transaction does later.
     */
    private boolean independent;

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
        Optional<IdempotencyRecord> again = store(() -> outside(() -> engine.store.find(keyHash)));
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
                IdempotencyContext.enter(new IdempotencyContext.Call(op.name(), readable));
        T value;
        try {
            value = action.run();
        } catch (Throwable t) {
            if (inTransaction) {
                engine.transactions.setRollbackOnly();
            }
            t.addSuppressed(failure);
            publish(Outcome.FAILED, claimNanos);
            throw t;
        } finally {
            IdempotencyContext.exit(previous);
        }
        if (compensation != null && inTransaction) {
            compensateOnRollback(value);
        }
        publish(Outcome.UNGUARDED, claimNanos);
        return value;
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
            throw IdempotentCall.<RuntimeException>sneaky(recorded);
        }
        Object value;
        try {
            value = cached ? engine.decoded.decode(record, data, op.resultType().type())
                    : engine.codec.decode(data, op.resultType().type());
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

    // ---- the owner's side: the key is ours ------------------------------------------------------------------

    /** Our claim: where it lives, and the keeper of its lease when it is committed and visible to others. */
    private final class Owned {
        final ClaimRequest request;
        /** The claim lives in the caller's still-open transaction and commits or rolls back with it. */
        final boolean joined;
        final @Nullable LeaseKeeper keeper;

        Owned(ClaimRequest request, boolean joined) {
            this.request = request;
            this.joined = joined;
            this.keeper = joined ? null : LeaseKeeper.start(engine.store, engine.clock, request.keyHash(),
                    request.leaseUntil(), op.lease(), op.name() + " key '" + readable + "'");
        }

        /** Stops renewing; the lease that identifies the claim from now on. */
        Instant finish() {
            return keeper == null ? request.leaseUntil() : keeper.stop();
        }

        /** Runs a store write of the owner: outside the caller's transaction unless the claim lives in it. */
        <R> R write(Supplier<R> work) {
            return joined ? work.get() : outside(work);
        }
    }

    private T run(boolean transactional) throws E {
        Owned owned = new Owned(claim, transactional);
        if (engine.gate != null && op.tier() == Tier.IRREVERSIBLE) {
            try {
                engine.gate.check(new ConfirmationGate.Call(op.name(), readable, Arrays.asList(arguments)));
            } catch (RuntimeException e) {
                // refused before the method ran: nothing happened
                settle(owned, Settling.settle(op.tier(), false, Settling.Ending.FAILED), null, e);
                throw fail(e instanceof ConfirmationRequiredException ? Outcome.CONFIRMATION_REQUIRED
                        : Outcome.FAILED, e);
            }
        }
        IdempotencyContext.Call previous =
                IdempotencyContext.enter(new IdempotencyContext.Call(op.name(), readable));
        T value;
        try {
            value = action.run();
        } catch (Throwable t) {
            completeAfterThrowing(owned, t);
            throw t;
        } finally {
            IdempotencyContext.exit(previous);
        }
        return completeAfterReturning(owned, value);
    }

    /**
     * The method threw. A declared replayable exception is the call's outcome, recorded like a value. Anything
     * else records nothing: inside a transaction that transaction is marked rollback-only, so that the method's
     * partial writes never commit without their claim (a checked exception commits under Spring's default
     * rules); then the key is released so that a retry runs again, unless the call is irreversible and the
     * exception is not one of its {@code releaseOn}: its effect may have happened, so the key is held for review.
     */
    private void completeAfterThrowing(Owned owned, Throwable thrown) {
        Class<? extends Throwable> recordedAs = op.recordedAs(thrown);
        if (recordedAs != null) {
            recordException(owned, recordedAs, thrown);
            return;
        }
        if (engine.transactions.isTransactionActive()) {
            engine.transactions.setRollbackOnly();
        }
        // an exception among the operation's releaseOn says that the effect did not happen
        settle(owned, Settling.settle(op.tier(), !op.releases(thrown), Settling.Ending.FAILED), null, thrown);
        publish(Outcome.FAILED, claimNanos);
    }

    /**
     * Records a declared business exception as the call's outcome, by the same path as a value. A failure to
     * record is added to the business exception, which the caller gets either way.
     */
    private void recordException(Owned owned, Class<? extends Throwable> type, Throwable thrown) {
        byte[] data = RecordedExceptions.encode(type, thrown.getMessage());
        try {
            // a declared decision ("insufficient funds"): nothing happened, so a rollback simply releases the key
            recordWithCommit(owned, data, false);
        } catch (IdempotencyException e) {
            thrown.addSuppressed(e);
        }
    }

    private T completeAfterReturning(Owned owned, T value) {
        boolean inTransaction = engine.transactions.isTransactionActive();
        if (compensation != null && inTransaction) {
            // registered before anything else can fail: whatever rolls the transaction back after the method
            // returned (recording the result included), the external effect is undone, before the key is
            // released to a retry; an unknown commit outcome compensates nothing (the writes may be there)
            compensateOnRollback(value);
        }
        byte[] data;
        try {
            data = engine.codec.encode(value, op.resultType().type());
            ResultSize.check(op, data);
            if (RecordedExceptions.isException(data)) {
                throw new IdempotencyReplayException(op.description() + ": the result codec wrote a value"
                        + " starting with the byte 0x00, which marks a recorded exception; a ResultCodec must"
                        + " never write it");
            }
        } catch (RuntimeException e) {
            if (inTransaction) {
                engine.transactions.setRollbackOnly();
            }
            // the side effect happened and cannot be replayed: an irreversible one is held for review, since
            // releasing would let a retry do it twice
            settle(owned, Settling.settle(op.tier(), true, Settling.Ending.FAILED), null, e);
            throw fail(Outcome.FAILED, e instanceof IdempotencyReplayException ? e
                    : new IdempotencyReplayException(op.description() + ": cannot record the result", e));
        }
        recordWithCommit(owned, data, true);
        return value;
    }

    /**
     * Records an outcome (a value or a declared exception) so that it is replayed only once the method's writes
     * are committed:
     * <ul>
     * <li>a claim in the caller's transaction: at once, in it (it commits or rolls back with the writes);</li>
     * <li>no transaction: at once;</li>
     * <li>a committed claim inside a caller's transaction (a store that cannot join it, or an irreversible call):
     * when that transaction ends, its lease renewed until then. Committed: recorded. Rolled back (or the
     * savepoint the call ran under): released, or held for review if irreversible. Unknown (the commit's reply
     * was lost): nothing is released, the writes may be there; an irreversible call is held for review, a
     * reversible one stays in flight until its lease ends.</li>
     * </ul>
     *
     * @param mayHaveActed false for a declared exception (a decision: nothing happened), whose key a rollback
     *                     or an unknown commit simply releases, whatever the tier
     */
    private void recordWithCommit(Owned owned, byte[] data, boolean mayHaveActed) {
        boolean inTransaction = engine.transactions.isTransactionActive();
        if (owned.joined || !inTransaction) {
            // nothing stands between the outcome and its record: recorded now (in the transaction if joined)
            if (!settle(owned, Settling.settle(op.tier(), mayHaveActed, Settling.Ending.OUTCOME), data, null)) {
                return;
            }
            if (inTransaction) {
                publishWithCommit();
            } else {
                publish(Outcome.EXECUTED, claimNanos);
            }
            return;
        }
        engine.transactions.afterCompletion(completion -> {
            try {
                if (settle(owned, Settling.settle(op.tier(), mayHaveActed, Settling.Ending.of(completion)), data,
                        null)) {
                    publish(published(completion), claimNanos);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "could not settle the outcome of " + op.name() + " key '"
                        + readable + "' after its transaction ended (" + completion + "); the claim stays in"
                        + " flight until its lease ends", e);
            }
        });
    }

    /**
     * Publishes EXECUTED once the caller's transaction commits, ROLLED_BACK if it (or the savepoint) rolls back:
     * to the listeners and the open {@link IdempotencyContext} scopes. With neither, there is no one to tell, and
     * no callback is registered (with Spring, a synchronization costs some 400 bytes per call).
     */
    private void publishWithCommit() {
        outcome = Outcome.EXECUTED;
        if (engine.listeners.isEmpty() && !IdempotencyContext.collecting()) {
            return;
        }
        engine.transactions.afterCompletion(completion -> publish(published(completion), claimNanos));
    }

    /**
     * Carries out the {@link Settling settlement} of our claim.
     *
     * @param data  the outcome to record ({@link Settling.Settlement#RECORD} only)
     * @param cause the exception on its way to the caller, which keeps a failure to release or hold; null to log it
     * @return false when the outcome could not be recorded and the call went on unguarded (published as such)
     */
    private boolean settle(Owned owned, Settling.Settlement settlement, byte @Nullable [] data,
            @Nullable Throwable cause) {
        switch (settlement) {
            case RECORD -> {
                return record(owned, Objects.requireNonNull(data, "data"));
            }
            case RELEASE -> release(owned, cause);
            case HOLD_FOR_REVIEW -> holdForReview(owned, cause);
            case LEAVE_IN_FLIGHT -> owned.finish();
        }
        return true;
    }

    /**
     * Records the outcome. When the store fails and the operation proceeds unguarded, the method ran and its
     * outcome cannot be recorded: its result goes back all the same, the call is published as unguarded and this
     * returns false; the claim stays in flight until its lease ends, then a retry takes it over.
     */
    private boolean record(Owned owned, byte[] data) {
        Instant lease = owned.finish();
        Instant expiresAt = millis(now().plus(op.ttl()));
        boolean recorded;
        try {
            // what owned.write(() -> store.complete(...)) does, without a lambda when the claim is joined
            recorded = owned.joined ? engine.store.complete(keyHash, lease, data, expiresAt)
                    : outside(() -> engine.store.complete(keyHash, lease, data, expiresAt));
        } catch (RuntimeException e) {
            IdempotencyStoreException failure = new IdempotencyStoreException(op.description()
                    + ": could not record the result of key '" + readable + "'", true, e);
            if (op.onStoreDown() == StoreDown.PROCEED_UNGUARDED && !(e instanceof IdempotencyException)
                    && !(e instanceof CallerTransactionAborted)) {
                engine.warnUnguarded(op, failure);
                publish(Outcome.UNGUARDED, claimNanos);
                return false;
            }
            throw fail(Outcome.FAILED, failure);
        }
        if (!recorded) {
            throw fail(Outcome.FAILED, new IdempotencyStoreException(op.description() + ": the claim of key '"
                    + readable + "' was taken over or evicted before its result could be recorded"
                    + " (its lease of " + op.lease() + " ran out without being renewed: was the process paused?)",
                    true, null));
        }
        return true;
    }

    /** Registers the compensation of {@code value}, run if the caller's transaction rolls back. */
    private void compensateOnRollback(T value) {
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
            LOG.log(System.Logger.Level.ERROR, "the compensation of " + op.name() + " key '" + readable
                    + "' failed after its transaction rolled back; the external effect may remain", e);
        }
    }

    /**
     * Keeps an irreversible call's committed claim blocked as {@code NEEDS_REVIEW}: it may have acted, and its
     * outcome cannot be recorded. A failure to do so is kept (or logged), not thrown: the lease then exposes the
     * claim as stale, which leads to the same review.
     */
    private void holdForReview(Owned owned, @Nullable Throwable cause) {
        Instant lease = owned.finish();
        boolean held;
        try {
            held = owned.write(() -> engine.store.markNeedsReview(keyHash, lease));
        } catch (RuntimeException e) {
            keep(cause, e, "hold for review");
            return;
        }
        if (held) {
            attempt(Attempt.Kind.HELD_FOR_REVIEW, Status.IN_FLIGHT, cause != null
                    ? "it ended with " + cause.getClass().getName()
                            + (cause.getMessage() != null ? ": " + cause.getMessage() : "")
                    : "it returned, and its transaction did not commit (rolled back, or its commit outcome is"
                            + " unknown)", owned.joined);
        }
    }

    /**
     * Records this attempt in the executor's audit ({@link IdempotentExecutor.Builder#attempts}), if it has one:
     * in the caller's transaction when {@code inTransaction} (the write it records was made there and rolls back
     * with it), otherwise outside it, so that it outlives the rollback that usually follows a refusal. Never throws:
     * the call's own outcome matters more than its record.
     */
    private void attempt(Attempt.Kind kind, Status met, String detail, boolean inTransaction) {
        IdempotencyAudit audit = engine.attempts;
        if (audit == null) {
            return;
        }
        Attempt attempt = new Attempt(op.name(), readable, op.tier(), met, kind, detail, now());
        try {
            if (inTransaction) {
                audit.attempt(keyHash, attempt);
            } else {
                outside(() -> {
                    audit.attempt(keyHash, attempt);
                    return null;
                });
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not record the attempt " + attempt + " in " + audit, e);
        }
    }

    /** Gives the key back after a failure, so that a retry runs again; a failure to do so is kept, not thrown. */
    private void release(Owned owned, @Nullable Throwable cause) {
        Instant lease = owned.finish();
        try {
            owned.write(() -> engine.store.release(keyHash, lease));
        } catch (RuntimeException e) {
            keep(cause, e, "release");
        }
    }

    private void keep(@Nullable Throwable cause, RuntimeException failure, String what) {
        if (cause != null) {
            cause.addSuppressed(failure);
        } else {
            LOG.log(System.Logger.Level.ERROR, "could not " + what + " the claim of " + op.name() + " key '"
                    + readable + "'; it stays in flight until its lease ends", failure);
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

    /** The clock's instant in whole milliseconds (as {@link #millis} truncates it), made as one instant. */
    private Instant now() {
        return Instant.ofEpochMilli(engine.clock.millis());
    }

    /**
     * Every instant handed to a store is whole milliseconds, which every supported database stores exactly: a lease
     * read back then equals the lease written, and the conditional writes that match on it find their row.
     */
    private static Instant millis(Instant instant) {
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
    private static Outcome published(TransactionBridge.Completion completion) {
        return switch (completion) {
            case COMMITTED -> Outcome.EXECUTED;
            case ROLLED_BACK -> Outcome.ROLLED_BACK;
            case UNKNOWN -> Outcome.OUTCOME_UNKNOWN;
        };
    }

    @SuppressWarnings("unchecked")
    private static <X extends Throwable> X sneaky(Throwable t) throws X {
        throw (X) t;
    }
}
