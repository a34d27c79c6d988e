package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.internal.RecordedExceptions;
import dev.idempotency.store.CallerTransactionAborted;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyAudit.Attempt;
import dev.idempotency.store.IdempotencyRecord.Status;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The owner's side of a call whose key is ours ({@code docs/engine.md}, states {@code Run} and {@code Settle}): our
 * claim (where it lives, and the keeper of its lease), the confirmation gate and the method ({@link #run}), then what
 * becomes of the claim after the method returned ({@link #afterReturning}) or threw ({@link #afterThrowing}), decided
 * by {@link Settling} and carried out by {@link #settle}, now or when the caller's transaction ends
 * ({@link #recordWithCommit}).
 */
final class Owning<T, E extends Throwable> {
    private static final System.Logger LOG = System.getLogger(IdempotentExecutor.class.getName());

    private final IdempotentCall<T, E> call;
    private final IdempotentExecutor engine;
    private final IdempotentOperation<T> op;
    private final CallIdentity id;
    /** The request of the claim that is ours: its lease identifies our claim. */
    private final ClaimRequest request;
    /** The claim lives in the caller's still-open transaction and commits or rolls back with it. */
    private final boolean joined;
    /** Renews the lease of a committed claim, visible to others, until the call settles it. */
    private final @Nullable LeaseKeeper keeper;

    /**
     * Takes the claim of {@code request} over as its owner, and starts renewing its lease unless it is joined.
     *
     * @param joined whether the claim lives in the caller's still-open transaction
     */
    Owning(IdempotentCall<T, E> call, ClaimRequest request, boolean joined) {
        this.call = call;
        this.engine = call.engine;
        this.op = call.op;
        this.id = call.identity();
        this.request = request;
        this.joined = joined;
        this.keeper = joined ? null : LeaseKeeper.start(engine.store, engine.clock, request.keyHash(),
                request.leaseUntil(), op.lease(), op.name() + " key '" + id.readable() + "'");
    }

    /** Stops renewing; the lease that identifies the claim from now on. */
    private Instant finish() {
        return keeper == null ? request.leaseUntil() : keeper.stop();
    }

    /** Runs a store write of the owner: outside the caller's transaction unless the claim lives in it. */
    private <R> R write(Supplier<R> work) {
        return joined ? work.get() : engine.transactions.outside(work);
    }

    /** The confirmation gate (irreversible calls), then the method, then what becomes of the claim. */
    T run() throws E {
        if (engine.gate != null && op.tier() == Tier.IRREVERSIBLE) {
            try {
                engine.gate.check(new ConfirmationGate.Call(op.name(), id.readable(), Arrays.asList(call.arguments)));
            } catch (RuntimeException e) {
                // refused before the method ran: nothing happened
                settle(Settling.settle(op.tier(), false, Settling.Ending.FAILED), null, e);
                throw call.fail(e instanceof ConfirmationRequiredException ? Outcome.CONFIRMATION_REQUIRED
                        : Outcome.FAILED, e);
            }
        }
        IdempotencyContext.Call previous =
                IdempotencyContext.enter(new IdempotencyContext.Call(op.name(), id.readable()));
        T value;
        try {
            value = call.action.run();
        } catch (Throwable t) {
            afterThrowing(t);
            throw t;
        } finally {
            IdempotencyContext.exit(previous);
        }
        return afterReturning(value);
    }

    /**
     * The method threw. A declared replayable exception is the call's outcome, recorded like a value. Anything
     * else records nothing: inside a transaction that transaction is marked rollback-only, so that the method's
     * partial writes never commit without their claim (a checked exception commits under Spring's default
     * rules); then the key is released so that a retry runs again, unless the call is irreversible and the
     * exception is not one of its {@code releaseOn}: its effect may have happened, so the key is held for review.
     */
    private void afterThrowing(Throwable thrown) {
        Class<? extends Throwable> recordedAs = op.recordedAs(thrown);
        if (recordedAs != null) {
            recordException(recordedAs, thrown);
            return;
        }
        if (engine.transactions.isTransactionActive()) {
            engine.transactions.setRollbackOnly();
        }
        // an exception among the operation's releaseOn says that the effect did not happen
        settle(Settling.settle(op.tier(), !op.releases(thrown), Settling.Ending.FAILED), null, thrown);
        call.publish(Outcome.FAILED);
    }

    /**
     * Records a declared business exception as the call's outcome, by the same path as a value. A failure to
     * record is added to the business exception, which the caller gets either way.
     */
    private void recordException(Class<? extends Throwable> type, Throwable thrown) {
        byte[] data = RecordedExceptions.encode(type, thrown.getMessage());
        try {
            // a declared decision ("insufficient funds"): nothing happened, so a rollback simply releases the key
            recordWithCommit(data, false);
        } catch (IdempotencyException e) {
            thrown.addSuppressed(e);
        }
    }

    /** The method returned {@code value}: it is encoded and recorded, or the claim settled without it. */
    private T afterReturning(T value) {
        boolean inTransaction = engine.transactions.isTransactionActive();
        if (call.compensation != null && inTransaction) {
            // registered before anything else can fail: whatever rolls the transaction back after the method
            // returned (recording the result included), the external effect is undone, before the key is
            // released to a retry; an unknown commit outcome compensates nothing (the writes may be there)
            call.compensateOnRollback(value);
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
            settle(Settling.settle(op.tier(), true, Settling.Ending.FAILED), null, e);
            throw call.fail(Outcome.FAILED, e instanceof IdempotencyReplayException ? e
                    : new IdempotencyReplayException(op.description() + ": cannot record the result", e));
        }
        recordWithCommit(data, true);
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
    private void recordWithCommit(byte[] data, boolean mayHaveActed) {
        boolean inTransaction = engine.transactions.isTransactionActive();
        if (joined || !inTransaction) {
            // nothing stands between the outcome and its record: recorded now (in the transaction if joined)
            if (!settle(Settling.settle(op.tier(), mayHaveActed, Settling.Ending.OUTCOME), data, null)) {
                return;
            }
            if (inTransaction) {
                call.publishWithCommit();
            } else {
                call.publish(Outcome.EXECUTED);
            }
            return;
        }
        engine.transactions.afterCompletion(completion -> {
            try {
                if (settle(Settling.settle(op.tier(), mayHaveActed, Settling.Ending.of(completion)), data, null)) {
                    call.publish(IdempotentCall.published(completion));
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "could not settle the outcome of " + op.name() + " key '"
                        + id.readable() + "' after its transaction ended (" + completion + "); the claim stays in"
                        + " flight until its lease ends", e);
            }
        });
    }

    /**
     * Carries out the {@link Settling settlement} of our claim.
     *
     * @param data  the outcome to record ({@link Settling.Settlement#RECORD} only)
     * @param cause the exception on its way to the caller, which keeps a failure to release or hold; null to log it
     * @return false when the outcome could not be recorded and the call went on unguarded (published as such)
     */
    private boolean settle(Settling.Settlement settlement, byte @Nullable [] data, @Nullable Throwable cause) {
        switch (settlement) {
            case RECORD -> {
                return record(Objects.requireNonNull(data, "data"));
            }
            case RELEASE -> release(cause);
            case HOLD_FOR_REVIEW -> holdForReview(cause);
            case LEAVE_IN_FLIGHT -> finish();
        }
        return true;
    }

    /**
     * Records the outcome. When the store fails and the operation proceeds unguarded, the method ran and its
     * outcome cannot be recorded: its result goes back all the same, the call is published as unguarded and this
     * returns false; the claim stays in flight until its lease ends, then a retry takes it over.
     */
    private boolean record(byte[] data) {
        Instant lease = finish();
        Instant expiresAt = IdempotentCall.millis(call.now().plus(op.ttl()));
        byte[] keyHash = id.keyHash();
        boolean recorded;
        try {
            // what write(() -> store.complete(...)) does, without a lambda when the claim is joined
            recorded = joined ? engine.store.complete(keyHash, lease, data, expiresAt)
                    : engine.transactions.outside(() -> engine.store.complete(keyHash, lease, data, expiresAt));
        } catch (RuntimeException e) {
            IdempotencyStoreException failure = new IdempotencyStoreException(op.description()
                    + ": could not record the result of key '" + id.readable() + "'", true, e);
            if (op.onStoreDown() == StoreDown.PROCEED_UNGUARDED && !(e instanceof IdempotencyException)
                    && !(e instanceof CallerTransactionAborted)) {
                engine.warnUnguarded(op, failure);
                call.publish(Outcome.UNGUARDED);
                return false;
            }
            throw call.fail(Outcome.FAILED, failure);
        }
        if (!recorded) {
            throw call.fail(Outcome.FAILED, new IdempotencyStoreException(op.description() + ": the claim of key '"
                    + id.readable() + "' was taken over or evicted before its result could be recorded"
                    + " (its lease of " + op.lease() + " ran out without being renewed: was the process paused?)",
                    true, null));
        }
        return true;
    }

    /**
     * Keeps an irreversible call's committed claim blocked as {@code NEEDS_REVIEW}: it may have acted, and its
     * outcome cannot be recorded. A failure to do so is kept (or logged), not thrown: the lease then exposes the
     * claim as stale, which leads to the same review.
     */
    private void holdForReview(@Nullable Throwable cause) {
        Instant lease = finish();
        boolean held;
        try {
            held = write(() -> engine.store.markNeedsReview(id.keyHash(), lease));
        } catch (RuntimeException e) {
            keep(cause, e, "hold for review");
            return;
        }
        if (held) {
            call.attempt(Attempt.Kind.HELD_FOR_REVIEW, Status.IN_FLIGHT, cause != null
                    ? "it ended with " + cause.getClass().getName()
                            + (cause.getMessage() != null ? ": " + cause.getMessage() : "")
                    : "it returned, and its transaction did not commit (rolled back, or its commit outcome is"
                            + " unknown)", joined);
        }
    }

    /** Gives the key back after a failure, so that a retry runs again; a failure to do so is kept, not thrown. */
    private void release(@Nullable Throwable cause) {
        Instant lease = finish();
        try {
            write(() -> engine.store.release(id.keyHash(), lease));
        } catch (RuntimeException e) {
            keep(cause, e, "release");
        }
    }

    private void keep(@Nullable Throwable cause, RuntimeException failure, String what) {
        if (cause != null) {
            cause.addSuppressed(failure);
        } else {
            LOG.log(System.Logger.Level.ERROR, "could not " + what + " the claim of " + op.name() + " key '"
                    + id.readable() + "'; it stays in flight until its lease ends", failure);
        }
    }
}
