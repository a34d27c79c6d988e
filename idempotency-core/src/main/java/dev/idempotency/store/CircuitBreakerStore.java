package dev.idempotency.store;

import dev.idempotency.IdempotencyException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A circuit breaker in front of a store, so that a store that keeps failing (a database down, a pool exhausted)
 * fails calls at once instead of holding every request thread for a connection or lock timeout.
 *
 * <pre>{@code
 * IdempotencyStore store = CaffeinePrefilter.wrap(                  // optional: replays from memory go on
 *         CircuitBreakerStore.wrap(jdbcStore).failureThreshold(5).openFor(Duration.ofSeconds(10)).build())
 *     .build();
 * IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
 * }</pre>
 *
 * <p><b>Where it goes.</b> Directly around the real store, <em>under</em> a {@code CaffeinePrefilter} if there is
 * one: the pre-filter then keeps replaying the outcomes it holds (they are committed: replaying them is safe) while
 * the circuit is open, and only what it cannot answer reaches the breaker. One breaker per store, so per executor,
 * never per key.
 *
 * <p><b>States.</b>
 * <ul>
 * <li>{@link State#CLOSED}: every call goes to the store; {@link Builder#failureThreshold} consecutive failures
 * open the circuit;</li>
 * <li>{@link State#OPEN} for {@link Builder#openFor}: new work (claim, take-over, find, resolve, purge) fails at
 * once with {@link CircuitOpenException}, without touching the store. The writes of a claim already held (complete,
 * renew, release, mark for review) still go through: they are one per call in flight, and each saves an outcome or
 * frees a key;</li>
 * <li>{@link State#HALF_OPEN} once the cool-down is over: one trial call goes to the store (the others keep
 * failing fast); its success closes the circuit, its failure opens it again for another {@code openFor}.</li>
 * </ul>
 * A failure is a {@link RuntimeException} that is neither an {@link IdempotencyException} (the store answered) nor a
 * {@link CallerTransactionAborted} (the caller's transaction lost a deadlock: the store is well). Each change of
 * state is logged once (opening as a warning) and told to the {@link Listener}s.
 *
 * <p>A hand-written breaker rather than resilience4j's: {@code idempotency-core} carries no framework, and these
 * few rules need no more. A store decorated with any other breaker works the same, as long as its refusal is an
 * unchecked exception.
 *
 * <p>The reports ({@link #backlog}, {@link #listNeedsReview}, {@link #listStuck}) pass the breaker by: they run on
 * an operator's or a scheduler's thread, never hold a request thread, and their failure (or a store that cannot
 * count) says nothing about whether calls can claim keys.
 *
 * <p>Thread-safe.
 */
public final class CircuitBreakerStore extends ForwardingIdempotencyStore {

    private static final System.Logger LOG = System.getLogger(CircuitBreakerStore.class.getName());

    /** Consecutive failures that open the circuit, unless the builder says otherwise. */
    public static final int DEFAULT_FAILURE_THRESHOLD = 5;
    /** How long the circuit stays open before a trial call, unless the builder says otherwise. */
    public static final Duration DEFAULT_OPEN_FOR = Duration.ofSeconds(10);

    /** The state of the circuit. */
    public enum State {
        /** Calls go to the store. */
        CLOSED,
        /** Calls fail fast without touching the store. */
        OPEN,
        /** One trial call goes to the store; the others fail fast. */
        HALF_OPEN
    }

    /** Hears each change of state (metrics, alerts); called on the thread that caused it. Keep it fast. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param from  the state left
         * @param to    the state entered
         * @param cause the failure that opened the circuit, or null
         */
        void onStateChange(State from, State to, @Nullable Throwable cause);
    }

    private final int failureThreshold;
    private final Duration openFor;
    private final Clock clock;
    private final List<Listener> listeners;

    private volatile State state = State.CLOSED;
    /** Consecutive failures while closed; written under the lock, read without it on the path of a success. */
    private volatile int failures;
    private long openings;
    private Instant openUntil = Instant.MIN;
    private boolean trialInFlight;
    private @Nullable Throwable lastFailure;

    private CircuitBreakerStore(Builder b) {
        super(b.store);
        this.failureThreshold = b.failureThreshold;
        this.openFor = b.openFor;
        this.clock = b.clock;
        this.listeners = List.copyOf(b.listeners);
    }

    /** Starts a breaker in front of {@code store}. */
    public static Builder wrap(IdempotencyStore store) {
        return new Builder(store);
    }


    /** The state now (an open circuit whose cool-down is over reads {@code OPEN} until a call tries it). */
    public State state() {
        return state;
    }

    /** How many times the circuit has opened since it was built. */
    public synchronized long openings() {
        return openings;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
        return guarded(() -> delegate().claim(request));
    }

    @Override
    public ClaimResult takeOver(ClaimRequest request, IdempotencyRecord observed) {
        return guarded(() -> delegate().takeOver(request, observed));
    }

    @Override
    public boolean complete(byte[] keyHash, Instant leaseUntil, byte[] result, Instant expiresAt) {
        return owner(() -> delegate().complete(keyHash, leaseUntil, result, expiresAt));
    }

    @Override
    public boolean renew(byte[] keyHash, Instant leaseUntil, Instant newLeaseUntil) {
        return owner(() -> delegate().renew(keyHash, leaseUntil, newLeaseUntil));
    }

    @Override
    public boolean release(byte[] keyHash, Instant leaseUntil) {
        return owner(() -> delegate().release(keyHash, leaseUntil));
    }

    @Override
    public Optional<IdempotencyRecord> find(byte[] keyHash) {
        return guarded(() -> delegate().find(keyHash));
    }

    @Override
    public boolean markNeedsReview(byte[] keyHash, Instant leaseUntil) {
        return owner(() -> delegate().markNeedsReview(keyHash, leaseUntil));
    }

    @Override
    public boolean markNeedsReviewIfStale(byte[] keyHash, Instant leaseUntil, Instant now) {
        return guarded(() -> delegate().markNeedsReviewIfStale(keyHash, leaseUntil, now));
    }

    @Override
    public boolean resolve(IdempotencyRecord observed, byte @Nullable [] result, Instant expiresAt) {
        return guarded(() -> delegate().resolve(observed, result, expiresAt));
    }

    @Override
    public int purgeExpired(Instant now, int batchSize) {
        return guarded(() -> delegate().purgeExpired(now, batchSize));
    }




    /** New work: refused while open; the first call after the cool-down is the trial. */
    private <R> R guarded(Supplier<R> call) {
        boolean trial = admit();
        R result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            throw failed(trial, e);
        }
        after(trial, null);
        return result;
    }

    /** The writes of a claim already held: always tried, and counted. */
    private <R> R owner(Supplier<R> call) {
        R result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            throw failed(false, e);
        }
        after(false, null);
        return result;
    }

    /**
     * What a failed call throws: its own exception, unless its failure opened the circuit: then a
     * {@link CircuitOpenException} of that opening with the failure as its cause, so that the executor (and a log)
     * can tell one outage from the next.
     */
    private RuntimeException failed(boolean trial, RuntimeException e) {
        Transition t = after(trial, e);
        return t != null && t.to == State.OPEN ? new CircuitOpenException(t.opening, t.until, e, true) : e;
    }

    /** @return whether this call is the half-open trial */
    private boolean admit() {
        if (state == State.CLOSED) {
            return false;
        }
        Transition t;
        synchronized (this) {
            if (state == State.CLOSED) {
                return false;
            }
            if (state == State.HALF_OPEN || trialInFlight || clock.instant().isBefore(openUntil)) {
                throw new CircuitOpenException(openings, openUntil, lastFailure, false);
            }
            trialInFlight = true;
            t = move(State.HALF_OPEN, null);
        }
        t.announce();
        return true;
    }

    /** @return the change of state this call caused (already announced), or null */
    private @Nullable Transition after(boolean trial, @Nullable RuntimeException thrown) {
        boolean failed = thrown != null && !(thrown instanceof IdempotencyException)
                && !(thrown instanceof CallerTransactionAborted);
        if (!failed && !trial && state == State.CLOSED) {
            if (failures != 0) { // the common case, a healthy store, takes no lock
                synchronized (this) {
                    failures = 0;
                }
            }
            return null;
        }
        Transition t = null;
        synchronized (this) {
            if (trial) {
                trialInFlight = false;
            }
            if (!failed) {
                if (trial) {
                    failures = 0;
                    t = move(State.CLOSED, null);
                }
            } else if (trial || (state == State.CLOSED && ++failures >= failureThreshold)) {
                failures = 0;
                openings++;
                openUntil = clock.instant().plus(openFor);
                lastFailure = thrown;
                t = move(State.OPEN, thrown);
            }
        }
        if (t != null) {
            t.announce();
        }
        return t;
    }

    private Transition move(State to, @Nullable Throwable cause) {
        State from = state;
        state = to;
        return new Transition(from, to, cause, openings, openUntil);
    }

    /** A change of state, announced outside the lock. */
    private final class Transition {
        final State from;
        final State to;
        final @Nullable Throwable cause;
        final long opening;
        final Instant until;

        Transition(State from, State to, @Nullable Throwable cause, long opening, Instant until) {
            this.from = from;
            this.to = to;
            this.cause = cause;
            this.opening = opening;
            this.until = until;
        }

        void announce() {
            switch (to) {
                case OPEN -> LOG.log(System.Logger.Level.WARNING, "idempotency store circuit OPEN (opening " + opening
                        + ", from " + from + "): " + (from == State.HALF_OPEN ? "the trial call failed"
                        : failureThreshold + " consecutive store failures") + "; new calls fail fast without the"
                        + " store until " + until, cause);
                case HALF_OPEN -> LOG.log(System.Logger.Level.INFO, "idempotency store circuit HALF_OPEN: one trial"
                        + " call goes to the store");
                case CLOSED -> LOG.log(System.Logger.Level.INFO, "idempotency store circuit CLOSED: the store"
                        + " answered again");
            }
            for (Listener listener : listeners) {
                try {
                    listener.onStateChange(from, to, cause);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "circuit listener " + listener + " failed", e);
                }
            }
        }
    }

    /** Builds a {@link CircuitBreakerStore}. */
    public static final class Builder {
        private final IdempotencyStore store;
        private int failureThreshold = DEFAULT_FAILURE_THRESHOLD;
        private Duration openFor = DEFAULT_OPEN_FOR;
        private Clock clock = Clock.systemUTC();
        private final List<Listener> listeners = new ArrayList<>();

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
        }

        /** Consecutive store failures that open the circuit; default {@value #DEFAULT_FAILURE_THRESHOLD}. */
        public Builder failureThreshold(int failureThreshold) {
            if (failureThreshold < 1) {
                throw new IllegalArgumentException("failureThreshold must be at least 1, was " + failureThreshold);
            }
            this.failureThreshold = failureThreshold;
            return this;
        }

        /** How long an open circuit fails calls fast before it lets a trial call through; default 10 s. */
        public Builder openFor(Duration openFor) {
            Objects.requireNonNull(openFor, "openFor");
            if (openFor.isNegative() || openFor.isZero()) {
                throw new IllegalArgumentException("openFor must be positive, was " + openFor);
            }
            this.openFor = openFor;
            return this;
        }

        /** The clock of the cool-down; inject one in tests. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Adds a listener of state changes (the Micrometer listener is one). */
        public Builder listener(Listener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        public CircuitBreakerStore build() {
            return new CircuitBreakerStore(this);
        }
    }
}
