package dev.idempotency;

import dev.idempotency.internal.Durations;
import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The immutable facts of one idempotent operation, computed once (the aspect builds one per annotated method) and
 * passed with every call to {@link IdempotentExecutor#execute}.
 *
 * <pre>{@code
 * IdempotentOperation<Receipt> refund = IdempotentOperation.builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Receipt.class))
 *     .ttl("7d")
 *     .build();
 * }</pre>
 *
 * @param <T> the result type
 */
public final class IdempotentOperation<T> {

    /** The default time to live of a completed outcome. */
    public static final Duration DEFAULT_TTL = Duration.ofHours(24);
    /** The default time a duplicate waits for an attempt in flight. */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(10);
    /**
     * The default largest encoded result, 1 MiB: below every supported database's packet and column limits (MariaDB's
     * {@code max_allowed_packet} defaults to 16 MiB) and small enough for the pre-filter to hold many.
     */
    public static final int DEFAULT_MAX_RESULT_BYTES = 1 << 20;
    /** A committed claim's lease is this many lock timeouts long, unless set. */
    public static final int LEASE_PER_LOCK_TIMEOUT = 3;

    private final String name;
    private final Tier tier;
    private final ResultType<T> resultType;
    private final Duration ttl;
    private final Duration lockTimeout;
    private final Duration lease;
    private final int[] ignoredArguments;
    private final String description;
    private final List<Class<? extends Throwable>> replayExceptions;
    private final List<Class<? extends Throwable>> releaseOn;
    private final StoreDown onStoreDown;
    private final int maxResultBytes;

    private IdempotentOperation(Builder<T> b) {
        this.name = b.name;
        this.tier = b.tier;
        this.resultType = b.resultType;
        this.ttl = b.ttl;
        this.lockTimeout = b.lockTimeout;
        this.lease = b.lease != null ? b.lease : b.lockTimeout.multipliedBy(LEASE_PER_LOCK_TIMEOUT);
        this.ignoredArguments = b.ignoredArguments;
        this.description = b.description != null ? b.description : b.name;
        this.replayExceptions = b.replayExceptions;
        this.releaseOn = b.releaseOn;
        this.onStoreDown = b.onStoreDown;
        this.maxResultBytes = b.maxResultBytes;
    }

    /**
     * Starts an operation.
     *
     * @param name       the scope of its keys, such as {@code OrderService.createOrder}; stable across deployments
     * @param tier       its tier
     * @param resultType its declared result type
     */
    public static <T> Builder<T> builder(String name, Tier tier, ResultType<T> resultType) {
        return new Builder<>(name, tier, resultType);
    }

    public String name() {
        return name;
    }

    public Tier tier() {
        return tier;
    }

    public ResultType<T> resultType() {
        return resultType;
    }

    public Duration ttl() {
        return ttl;
    }

    public Duration lockTimeout() {
        return lockTimeout;
    }

    /** How long a committed claim is protected before it counts as crashed (stale). */
    public Duration lease() {
        return lease;
    }

    /**
     * The largest result, in encoded bytes, that a call records; a larger one fails the call before anything is
     * recorded, as a result that cannot be encoded does ({@link IdempotencyReplayException}: a {@link Tier#REVERSIBLE}
     * claim is released, an {@link Tier#IRREVERSIBLE} one held for review). {@link #DEFAULT_MAX_RESULT_BYTES} unless
     * set.
     */
    public int maxResultBytes() {
        return maxResultBytes;
    }

    /** Whether the argument at {@code index} is left out of the fingerprint. */
    public boolean isIgnored(int index) {
        return Arrays.binarySearch(ignoredArguments, index) >= 0;
    }

    /** The business exceptions recorded as outcomes and thrown again on replay ({@link Idempotent#replayExceptions()}). */
    public List<Class<? extends Throwable>> replayExceptions() {
        return replayExceptions;
    }

    /** The most specific of {@link #replayExceptions()} that {@code thrown} is an instance of, or null. */
    @Nullable Class<? extends Throwable> recordedAs(Throwable thrown) {
        Class<? extends Throwable> best = null;
        for (Class<? extends Throwable> c : replayExceptions) {
            if (c.isInstance(thrown) && (best == null || best.isAssignableFrom(c))) {
                best = c;
            }
        }
        return best;
    }

    /**
     * {@link Tier#IRREVERSIBLE} only: the exceptions that mean nothing happened, so that the key is released
     * ({@link Idempotent#releaseOn()}).
     */
    public List<Class<? extends Throwable>> releaseOn() {
        return releaseOn;
    }

    /** Whether {@code thrown} is one of {@link #releaseOn()} (or a subclass of one). */
    boolean releases(Throwable thrown) {
        for (Class<? extends Throwable> c : releaseOn) {
            if (c.isInstance(thrown)) {
                return true;
            }
        }
        return false;
    }

    /** The listed exception class of that exact binary name, or null: never a class the caller did not list. */
    @Nullable Class<? extends Throwable> replayExceptionNamed(String className) {
        for (Class<? extends Throwable> c : replayExceptions) {
            if (c.getName().equals(className)) {
                return c;
            }
        }
        return null;
    }

    /** What a call does when the store is unavailable ({@link Idempotent#onStoreDown()}). */
    public StoreDown onStoreDown() {
        return onStoreDown;
    }

    /** Where the operation comes from, for messages: a method and its key expression, or just the name. */
    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return "IdempotentOperation[" + name + ", " + tier + ", ttl=" + ttl + ", lockTimeout=" + lockTimeout
                + (onStoreDown == StoreDown.FAIL ? "" : ", onStoreDown=" + onStoreDown) + "]";
    }

    /** Builds an {@link IdempotentOperation}; {@link #build()} rejects what cannot work. */
    public static final class Builder<T> {
        private final String name;
        private final Tier tier;
        private final ResultType<T> resultType;
        private Duration ttl = DEFAULT_TTL;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private Duration lease;
        private int[] ignoredArguments = new int[0];
        private String description;
        private List<Class<? extends Throwable>> replayExceptions = List.of();
        private List<Class<? extends Throwable>> releaseOn = List.of();
        private StoreDown onStoreDown = StoreDown.FAIL;
        private boolean compensated;
        private int maxResultBytes = DEFAULT_MAX_RESULT_BYTES;

        private Builder(String name, Tier tier, ResultType<T> resultType) {
            this.name = Objects.requireNonNull(name, "name");
            this.tier = Objects.requireNonNull(tier, "tier");
            this.resultType = Objects.requireNonNull(resultType, "resultType");
        }

        public Builder<T> ttl(Duration ttl) {
            this.ttl = Objects.requireNonNull(ttl, "ttl");
            return this;
        }

        /** @param ttl {@code 30s}, {@code 15m}, {@code 24h}, {@code 7d} or ISO-8601 */
        public Builder<T> ttl(String ttl) {
            return ttl(Durations.parse(ttl, "ttl of " + name));
        }

        public Builder<T> lockTimeout(Duration lockTimeout) {
            this.lockTimeout = Objects.requireNonNull(lockTimeout, "lockTimeout");
            return this;
        }

        public Builder<T> lockTimeout(String lockTimeout) {
            return lockTimeout(Durations.parse(lockTimeout, "lockTimeout of " + name));
        }

        /**
         * The lease of a committed claim; defaults to three lock timeouts. It is renewed every third of it while the
         * method runs and until the caller's transaction ends, so it bounds how long a crash goes unnoticed.
         */
        public Builder<T> lease(Duration lease) {
            this.lease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        /** @param lease {@code 30s}, {@code 15m}, ... or ISO-8601; empty for the default */
        public Builder<T> lease(String lease) {
            Objects.requireNonNull(lease, "lease");
            return lease.isBlank() ? this : lease(Durations.parse(lease, "lease of " + name));
        }

        /**
         * {@link Tier#IRREVERSIBLE} only: the exceptions that mean nothing happened, which release the key; see
         * {@link Idempotent#releaseOn()}. {@link #build()} refuses them on another tier, and classes as broad as
         * {@code Exception}, {@code RuntimeException}, {@code Error} or {@code Throwable}.
         */
        @SafeVarargs
        public final Builder<T> releaseOn(Class<? extends Throwable>... types) {
            List<Class<? extends Throwable>> copy = new java.util.ArrayList<>(types.length);
            for (Class<? extends Throwable> t : types) {
                copy.add(Objects.requireNonNull(t, "releaseOn of " + name + " holds null"));
            }
            this.releaseOn = List.copyOf(copy);
            return this;
        }

        /**
         * What a call does when the store is unavailable; see {@link StoreDown}. {@link #build()} refuses
         * {@link StoreDown#PROCEED_UNGUARDED} unless the tier is {@link Tier#REVERSIBLE} and the operation is
         * {@link #compensated(boolean) compensated}.
         */
        public Builder<T> onStoreDown(StoreDown onStoreDown) {
            this.onStoreDown = Objects.requireNonNull(onStoreDown, "onStoreDown");
            return this;
        }

        /**
         * Whether every call passes a {@link IdempotentExecutor.Compensation} (the aspect: the method has a
         * {@code compensate}); required by {@link StoreDown#PROCEED_UNGUARDED}, which the executor then checks per call.
         */
        public Builder<T> compensated(boolean compensated) {
            this.compensated = compensated;
            return this;
        }

        /**
         * The largest result a call records, in encoded bytes (JSON with the default codec);
         * {@link #DEFAULT_MAX_RESULT_BYTES} (1 MiB) unless set. Checked right after the result is encoded, before
         * anything is recorded: a larger result is an {@link IdempotencyReplayException}, never a row the database
         * refuses after the method ran (MariaDB's {@code max_allowed_packet}) or a cache filled with megabytes.
         */
        public Builder<T> maxResultBytes(int maxResultBytes) {
            if (maxResultBytes <= 0) {
                throw new IllegalArgumentException("maxResultBytes of " + name + " must be positive, was "
                        + maxResultBytes);
            }
            this.maxResultBytes = maxResultBytes;
            return this;
        }

        /** Positions of the arguments left out of the fingerprint ({@link IdempotencyIgnore} parameters). */
        public Builder<T> ignoredArguments(int... positions) {
            int[] sorted = positions.clone();
            Arrays.sort(sorted);
            this.ignoredArguments = sorted;
            return this;
        }

        /** How messages name the operation: a method signature and its key expression. */
        public Builder<T> description(String description) {
            this.description = Objects.requireNonNull(description, "description");
            return this;
        }

        /**
         * Business exceptions recorded as the outcome and thrown again on every replay; see
         * {@link Idempotent#replayExceptions()} for the rules. {@link #build()} refuses a class that is abstract, not
         * public, without a public {@code (String)} constructor, as broad as {@code Exception},
         * {@code RuntimeException}, {@code Error} or {@code Throwable}, or one of this library's own exceptions.
         */
        @SafeVarargs
        public final Builder<T> replayExceptions(Class<? extends Throwable>... types) {
            List<Class<? extends Throwable>> copy = new java.util.ArrayList<>(types.length);
            for (Class<? extends Throwable> t : types) {
                copy.add(Objects.requireNonNull(t, "replayExceptions of " + name + " holds null"));
            }
            this.replayExceptions = List.copyOf(copy);
            return this;
        }

        public IdempotentOperation<T> build() {
            if (name.isBlank()) {
                throw new IllegalArgumentException("an idempotent operation needs a name");
            }
            requirePositive(ttl, "ttl");
            requirePositive(lockTimeout, "lockTimeout");
            if (lease != null) {
                requirePositive(lease, "lease");
            }
            for (Class<? extends Throwable> t : replayExceptions) {
                checkReplayable(t);
            }
            if (!releaseOn.isEmpty() && tier != Tier.IRREVERSIBLE) {
                throw new IllegalArgumentException("releaseOn of " + (description != null ? description : name)
                        + " needs tier = IRREVERSIBLE (every exception of a " + tier + " call releases its key),"
                        + " the tier is " + tier);
            }
            for (Class<? extends Throwable> t : releaseOn) {
                if (t == Throwable.class || t == Exception.class || t == RuntimeException.class || t == Error.class) {
                    throw new IllegalArgumentException("releaseOn of " + (description != null ? description : name)
                            + ": " + t.getName() + " is too broad: a timeout or a lost connection, whose effect is"
                            + " unknown, would release the key and let a retry act twice; list the exceptions that"
                            + " mean nothing happened");
                }
            }
            if (onStoreDown == StoreDown.PROCEED_UNGUARDED && (tier != Tier.REVERSIBLE || !compensated)) {
                throw new IllegalArgumentException("onStoreDown = PROCEED_UNGUARDED of "
                        + (description != null ? description : name) + " needs tier = REVERSIBLE and a compensation"
                        + " (a call run without its key may run twice; the compensation is how a duplicate is"
                        + " undone), the tier is " + tier + (compensated ? "" : " and there is no compensation")
                        + (tier == Tier.IRREVERSIBLE ? ": an irreversible call always fails when the store is down"
                        : ""));
            }
            return new IdempotentOperation<>(this);
        }

        private void checkReplayable(Class<? extends Throwable> t) {
            String problem = null;
            if (t == Throwable.class || t == Exception.class || t == RuntimeException.class || t == Error.class) {
                problem = "is too broad: it would record transient failures (a timeout, a lost connection) and"
                        + " replay them for the whole ttl; list the business exceptions that are decisions";
            } else if (IdempotencyException.class.isAssignableFrom(t)) {
                problem = "is one of this library's own exceptions, which are never recorded";
            } else if (Modifier.isAbstract(t.getModifiers()) || !Modifier.isPublic(t.getModifiers())) {
                problem = "must be a public, concrete class, so that a replay can make a new one";
            } else {
                try {
                    Constructor<? extends Throwable> c = t.getConstructor(String.class);
                    if (!Modifier.isPublic(c.getModifiers())) {
                        problem = "needs a public (String message) constructor";
                    }
                } catch (NoSuchMethodException e) {
                    problem = "needs a public (String message) constructor, so that a replay can make a new one";
                }
            }
            if (problem != null) {
                throw new IllegalArgumentException("replayExceptions of " + (description != null ? description : name)
                        + ": " + t.getName() + " " + problem);
            }
        }

        private void requirePositive(Duration d, String what) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " of " + name + " must be positive, was " + d);
            }
        }
    }
}
