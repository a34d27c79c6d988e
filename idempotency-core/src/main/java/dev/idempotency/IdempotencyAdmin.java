package dev.idempotency;

import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.Durations;
import dev.idempotency.internal.Keys;
import dev.idempotency.internal.RecordedExceptions;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Action;
import dev.idempotency.store.InMemoryIdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.IdempotencyStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What an operator (or an operator's endpoint) needs: the inventory of idempotent operations, and, for one key, its
 * state, its eviction, and the resolution of an outcome nobody knows ({@link Status#NEEDS_REVIEW}: an
 * {@link Tier#IRREVERSIBLE} call that started and never finished).
 *
 * <pre>{@code
 * IdempotencyAdmin admin = IdempotencyAdmin.builder(store).build();
 * admin.find("Payments.refund", "REFUND:R-1");            // status, readable key, createdAt, expiresAt, leaseUntil
 * ResolvedBy by = new ResolvedBy("alice", "gateway statement of 2026-12-05");
 * // the gateway says the refund went out: later calls replay this receipt
 * admin.resolveExecuted("Payments.refund", "REFUND:R-1", receipt, ResultType.of(Receipt.class), Duration.ofDays(7), by);
 * // or it did not: the next call runs
 * admin.release("Payments.refund", "REFUND:R-1", by);
 * admin.history("Payments.refund", "REFUND:R-1");            // who resolved it, when, why
 * }</pre>
 *
 * <p>Every resolution names who decided and why ({@link ResolvedBy}); there is no resolution without one. Once the
 * store has applied it, the admin appends an entry to its {@link IdempotencyAudit} (by default one in memory; give a
 * durable one, such as the JDBC store's {@code JdbcIdempotencyAudit}, with {@link Builder#audit}) and logs it at
 * INFO. Run a resolution in a transaction when the store and the audit share one (the Spring Boot endpoint does), so
 * that both commit or neither; outside one, an audit that fails after the store applied the resolution throws, naming
 * the resolution that stands.
 *
 * <p>A key is named as the application names it: the operation, the key the expression yields, and the scope (a
 * tenant) when an {@link IdempotencyScope} is in use; the stored identity is computed from them exactly as the
 * executor does. Give the admin the codec the executor uses, so that a result it records replays.
 *
 * <p>Thread-safe. The inventory is read once, at the first call of {@link #operations()}.
 */
public final class IdempotencyAdmin {

    /** Where the annotation processor writes the inventory of a compilation, in its class output. */
    public static final String OPERATIONS_RESOURCE = "META-INF/idempotency/operations.json";

    private static final System.Logger LOG = System.getLogger(IdempotencyAdmin.class.getName());
    private static final int FORMAT = 1;
    private static final int EVICT_ATTEMPTS = 10;
    /** How many entries {@link #history} returns at most. */
    static final int HISTORY = 100;

    private final IdempotencyStore store;
    private final ResultCodec codec;
    private final Clock clock;
    private final ClassLoader classLoader;
    private final IdempotencyAudit audit;
    private volatile @Nullable List<Operation> operations;

    private IdempotencyAdmin(Builder b) {
        this.store = b.store;
        this.codec = b.codec;
        this.clock = b.clock;
        this.classLoader = b.classLoader;
        this.audit = b.audit;
    }

    /** Starts an admin on {@code store}. */
    public static Builder builder(IdempotencyStore store) {
        return new Builder(store);
    }

    /**
     * One idempotent operation, as the annotation processor found it in the source.
     *
     * @param name           the operation name: the scope of its keys
     * @param className      the binary name of the declaring class ({@code com.example.Payments$Gateway})
     * @param method         the method name
     * @param parameterTypes the erased parameter types, as {@link Class#getTypeName()} writes them
     * @param returnType     the declared return type, generics included
     * @param tier           the tier
     * @param key            the key expression (empty for a {@link Tier#READ_ONLY} one without)
     * @param ttl            how long a completed outcome is replayed
     * @param compensate     the compensation method's name, or null
     * @param lockTimeout    how long a duplicate waits for an attempt in flight
     * @param onStoreDown    what a call does when the store is unavailable ({@code FAIL} for an inventory written
     *                       before the processor recorded it)
     */
    public record Operation(
            String name,
            String className,
            String method,
            List<String> parameterTypes,
            String returnType,
            Tier tier,
            String key,
            Duration ttl,
            @Nullable String compensate,
            Duration lockTimeout,
            StoreDown onStoreDown) {

        /** An operation that fails when the store is down (the default). */
        public Operation(String name, String className, String method, List<String> parameterTypes,
                String returnType, Tier tier, String key, Duration ttl, @Nullable String compensate,
                Duration lockTimeout) {
            this(name, className, method, parameterTypes, returnType, tier, key, ttl, compensate, lockTimeout,
                    StoreDown.FAIL);
        }

        public Operation {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(className, "className");
            Objects.requireNonNull(method, "method");
            parameterTypes = List.copyOf(parameterTypes);
            Objects.requireNonNull(returnType, "returnType");
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(ttl, "ttl");
            Objects.requireNonNull(lockTimeout, "lockTimeout");
            Objects.requireNonNull(onStoreDown, "onStoreDown");
        }
    }

    /**
     * The state of one key, as the store holds it.
     *
     * @param operation  the operation name
     * @param key        the readable key (cut to 255 characters)
     * @param tier       the operation's tier
     * @param status     in flight, completed, or needing review
     * @param hasResult  whether a result is recorded (it is replayed to a call with the same arguments)
     * @param createdAt  when the key was first claimed
     * @param expiresAt  when a completed outcome stops being replayed
     * @param leaseUntil until when an in-flight claim is protected; null once completed
     * @param stale      an in-flight claim whose lease ran out: its attempt crashed
     * @param expired    a completed outcome past its time to live: the next call runs again
     * @param argumentsDigest the fingerprint of the arguments of the call that claimed the key (SHA-256 of their
     *                   canonical form, hex): a retry replays only with the same one, so two calls with equal
     *                   digests carried the same arguments; the arguments themselves are never stored
     */
    public record Entry(
            String operation,
            String key,
            Tier tier,
            Status status,
            boolean hasResult,
            Instant createdAt,
            Instant expiresAt,
            @Nullable Instant leaseUntil,
            boolean stale,
            boolean expired,
            String argumentsDigest) {
    }

    /**
     * Every idempotent operation compiled with the annotation processor that this class loader sees: the union of
     * every {@value #OPERATIONS_RESOURCE} on the class path, sorted by name.
     *
     * @return an immutable list, empty when no module was compiled with the processor
     * @throws IllegalStateException naming the file, if one cannot be read
     */
    public List<Operation> operations() {
        List<Operation> loaded = operations;
        if (loaded == null) {
            loaded = load();
            operations = loaded;
        }
        return loaded;
    }

    /** The operation of that name in {@link #operations()}. */
    public Optional<Operation> operation(String name) {
        return operations().stream().filter(o -> o.name().equals(name)).findFirst();
    }

    /** The state of {@code key} of {@code operation}, with no scope. */
    public Optional<Entry> find(String operation, String key) {
        return find(operation, "", key);
    }

    /**
     * The state of a key.
     *
     * @param operation the operation name
     * @param scope     what the {@link IdempotencyScope} returned for the call (a tenant); empty for none
     * @param key       the key, as the key expression yielded it
     * @throws IllegalArgumentException if the key could never have been accepted (blank, too long, control characters)
     */
    public Optional<Entry> find(String operation, String scope, String key) {
        Instant now = now();
        return store.find(hash(operation, scope, key)).map(r -> entry(r, now));
    }

    private static Entry entry(IdempotencyRecord r, Instant now) {
        return new Entry(r.operation(), r.key(), r.tier(), r.status(), r.result() != null, r.createdAt(),
                r.expiresAt(), r.leaseUntil(), r.isStale(now), r.isExpired(now),
                java.util.HexFormat.of().formatHex(r.fingerprint()));
    }

    /**
     * What waits for an operator, per operation, as the store holds it now: {@code NEEDS_REVIEW} records and the
     * claim date of the oldest, and in-flight claims past their lease (stuck). One query of the store's
     * ({@link IdempotencyStore#backlog}); the figures of every node, unlike the counts a node keeps of its own calls.
     *
     * @return one entry per operation with something waiting, by operation name; empty when nothing waits
     * @throws UnsupportedOperationException if the store cannot count by status
     */
    public List<Backlog> backlog() {
        return store.backlog(now());
    }

    /**
     * Up to {@code limit} keys held for review, the oldest first: the operator's work list. Each is resolved with
     * {@link #release} or {@link #resolveExecuted} (the scope is not stored: the readable key and operation are).
     *
     * @throws UnsupportedOperationException if the store cannot list by status
     */
    public List<Entry> needsReview(int limit) {
        Instant now = now();
        return store.listNeedsReview(limit).stream().map(r -> entry(r, now)).toList();
    }

    /**
     * Up to {@code limit} in-flight claims past their lease, the longest stuck first: attempts that crashed (or
     * hang). A retry takes a reversible one over or marks an irreversible one for review; an operator may resolve
     * either now.
     *
     * @throws UnsupportedOperationException if the store cannot list by status
     */
    public List<Entry> stuck(int limit) {
        Instant now = now();
        return store.listStuck(now, limit).stream().map(r -> entry(r, now)).toList();
    }

    /** Deletes the record of {@code key} of {@code operation}, with no scope, whatever its status. */
    public boolean evict(String operation, String key, ResolvedBy by) {
        return evict(operation, "", key, by);
    }

    /**
     * Deletes the record of a key whatever its status: the next call with it runs. Evicting an in-flight key lets a
     * duplicate run beside the attempt still holding it; evict completed or expired keys, and resolve the ones that
     * need review with {@link #release} or {@link #resolveExecuted}.
     *
     * <p>Unlike those two, eviction is unconditional, an operator's "delete whatever is there": it reads the record
     * and deletes exactly the state it read; if the record changed in between (a new claim, a completion), it reads
     * again and deletes the new state.
     *
     * @param by who evicts it, and why: recorded in the audit
     * @return false if there was no record (or it vanished before this deleted it)
     * @throws IllegalStateException if the record kept changing under ten attempts in a row
     */
    public boolean evict(String operation, String scope, String key, ResolvedBy by) {
        Objects.requireNonNull(by, "by: an eviction needs who decided it and why");
        byte[] hash = hash(operation, scope, key);
        for (int attempt = 0; attempt < EVICT_ATTEMPTS; attempt++) {
            Optional<IdempotencyRecord> record = store.find(hash);
            if (record.isEmpty()) {
                return false;
            }
            if (store.resolve(record.get(), null, now())) {
                audit(hash, record.get(), Action.EVICTED, by);
                return true;
            }
            // it changed between the read and the delete (or vanished): look again
        }
        throw new IllegalStateException("operation " + operation + " key '" + key + "' changed under "
                + EVICT_ATTEMPTS + " attempts in a row to evict it; nothing was deleted");
    }

    /** {@link #release(String, String, String, ResolvedBy)} with no scope. */
    public boolean release(String operation, String key, ResolvedBy by) {
        return release(operation, "", key, by);
    }

    /**
     * Resolves a key whose outcome is unknown as <em>not executed</em>: the record is deleted and the next call runs.
     * Use it when the side effect is known not to have happened.
     *
     * <p>The record is deleted only in the state it was read in: if, between the read and the delete, a new attempt
     * took the stale claim over or the slow original attempt completed it, nothing is deleted and
     * {@link IllegalStateException} says so; {@link #find} the key again and decide again.
     *
     * @param by who resolves it, and why: recorded in the audit
     * @return false if there was no record
     * @throws IllegalStateException if the record is completed, or in flight with its lease still running (an
     *                               attempt may be running): only an unknown outcome is resolved; or if the record
     *                               changed while it was being released
     */
    public boolean release(String operation, String scope, String key, ResolvedBy by) {
        Objects.requireNonNull(by, "by: a resolution needs who decided it and why");
        byte[] hash = hash(operation, scope, key);
        Optional<IdempotencyRecord> record = store.find(hash);
        if (record.isEmpty()) {
            return false;
        }
        requireUnknown(record.get());
        resolveObserved(record.get(), null, now(), "release");
        audit(hash, record.get(), Action.RELEASED, by);
        return true;
    }

    /** {@link #resolveExecuted(String, String, String, Object, ResultType, Duration, ResolvedBy)} with no scope. */
    public <T> boolean resolveExecuted(String operation, String key, @Nullable T result, ResultType<T> resultType,
            Duration ttl, ResolvedBy by) {
        return resolveExecuted(operation, "", key, result, resultType, ttl, by);
    }

    /**
     * Resolves a key whose outcome is unknown as <em>executed</em>, with the result the call would have returned:
     * the record becomes completed, and every later call with the same arguments replays {@code result} until
     * {@code ttl} from now.
     *
     * @param result     what the method returned, or would have (null for a {@code void} one)
     * @param resultType the method's declared return type, as the executor's operation declares it
     * @param by         who resolves it, and why: recorded in the audit
     * <p>As with {@link #release}, the record is resolved only in the state it was read in; if it changed meanwhile
     * (taken over, completed), nothing is written and {@link IllegalStateException} says so.
     *
     * @return false if there was no record
     * @throws IllegalStateException      if the record is completed, or in flight with its lease still running; or
     *                                    if it changed while it was being resolved
     * @throws IdempotencyReplayException if the codec cannot encode {@code result} as {@code resultType}
     */
    public <T> boolean resolveExecuted(String operation, String scope, String key, @Nullable T result,
            ResultType<T> resultType, Duration ttl, ResolvedBy by) {
        Objects.requireNonNull(by, "by: a resolution needs who decided it and why");
        Objects.requireNonNull(resultType, "resultType");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        byte[] hash = hash(operation, scope, key);
        Optional<IdempotencyRecord> record = store.find(hash);
        if (record.isEmpty()) {
            return false;
        }
        requireUnknown(record.get());
        byte[] data = codec.encode(result, resultType.type());
        if (RecordedExceptions.isException(data)) {
            // the byte 0x00 marks a recorded exception: a value must never look like one
            throw new IdempotencyReplayException("operation " + operation + " key '" + key + "': the result codec"
                    + " wrote a value starting with the byte 0x00, which marks a recorded exception");
        }
        resolveObserved(record.get(), data, now().plus(ttl), "resolveExecuted");
        audit(hash, record.get(), Action.RESOLVED_EXECUTED, by);
        return true;
    }

    /** {@link #history(String, String, String)} with no scope. */
    public List<IdempotencyAudit.Entry> history(String operation, String key) {
        return history(operation, "", key);
    }

    /**
     * The resolutions of a key recorded in the audit, the newest first (at most {@value #HISTORY}).
     *
     * @throws IllegalArgumentException if the key could never have been accepted
     */
    public List<IdempotencyAudit.Entry> history(String operation, String scope, String key) {
        return audit.history(hash(operation, scope, key), HISTORY);
    }

    /**
     * The attempts that met a key in trouble, as the executor recorded them in the audit when it was given it
     * ({@link IdempotentExecutor.Builder#attempts}), the oldest first (at most
     * {@value IdempotencyAudit#ATTEMPTS_KEPT}, the first ones): the retries refused as in progress, as held for review
     * or for other arguments, a stale claim taken over, the key held for review. Plain first runs and replays are
     * not recorded.
     *
     * @throws IllegalArgumentException if the key could never have been accepted
     */
    public List<IdempotencyAudit.Attempt> attempts(String operation, String scope, String key) {
        return audit.attempts(hash(operation, scope, key), IdempotencyAudit.ATTEMPTS_KEPT);
    }

    /** The latest {@code limit} resolutions of every key, the newest first. */
    public List<IdempotencyAudit.Entry> resolutions(int limit) {
        return audit.recent(limit);
    }

    /**
     * Records a resolution the store applied.
     *
     * @throws IdempotencyStoreException naming the resolution, if the audit fails
     */
    private void audit(byte[] hash, IdempotencyRecord before, Action action, ResolvedBy by) {
        IdempotencyAudit.Entry entry = new IdempotencyAudit.Entry(before.operation(), before.key(), before.tier(),
                before.status(), action, by, now());
        try {
            audit.append(hash, entry);
        } catch (RuntimeException e) {
            throw new IdempotencyStoreException("the audit could not record " + entry + " (" + e.getMessage()
                    + "); in a transaction it rolls back with the resolution, outside one the resolution stands",
                    false, e);
        }
        LOG.log(System.Logger.Level.INFO, "idempotency resolution: {0}", entry);
    }

    /** Applies the decision to the record as it was read, or says that it changed meanwhile. */
    private void resolveObserved(IdempotencyRecord observed, byte @Nullable [] data, Instant expiresAt,
            String method) {
        if (store.resolve(observed, data, expiresAt)) {
            return;
        }
        throw new IllegalStateException(method + ": operation " + observed.operation() + " key '" + observed.key()
                + "' changed since it was read as " + observed.status()
                + (observed.leaseUntil() != null ? " with its lease until " + observed.leaseUntil() : "")
                + " (a new attempt took it over, its attempt completed it, or another operator resolved it):"
                + " nothing was changed; find the key again and decide again");
    }

    private void requireUnknown(IdempotencyRecord r) {
        if (r.status() == Status.NEEDS_REVIEW || r.isStale(now())) {
            return;
        }
        throw new IllegalStateException("operation " + r.operation() + " key '" + r.key() + "' is " + r.status()
                + (r.status() == Status.IN_FLIGHT ? " with its lease running until " + r.leaseUntil()
                        + " (an attempt may still be running)" : "")
                + ": only an unknown outcome (NEEDS_REVIEW, or in flight past its lease) is resolved; use evict to"
                + " delete a record whatever its status");
    }

    private static byte[] hash(String operation, String scope, String key) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(scope, "scope");
        try {
            return Keys.hash(operation, scope, Keys.normalize(key));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("operation " + operation + ": no key '" + key + "' can exist: "
                    + e.getMessage(), e);
        }
    }

    private Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    private List<Operation> load() {
        JsonMapper mapper = JsonMapper.builder().build();
        List<Operation> all = new ArrayList<>();
        Enumeration<URL> files;
        try {
            files = classLoader.getResources(OPERATIONS_RESOURCE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + OPERATIONS_RESOURCE + " on the class path", e);
        }
        while (files.hasMoreElements()) {
            URL url = files.nextElement();
            try (InputStream in = url.openStream()) {
                all.addAll(parse(mapper.readTree(in)));
            } catch (IOException | RuntimeException e) {
                throw new IllegalStateException("cannot read the idempotent operations of " + url + ": "
                        + e.getMessage(), e);
            }
        }
        all.sort(Comparator.comparing(Operation::name).thenComparing(Operation::className));
        Map<String, Operation> byName = new HashMap<>();
        for (Operation o : all) {
            Operation other = byName.putIfAbsent(o.name(), o);
            if (other != null) {
                LOG.log(System.Logger.Level.WARNING, "operation " + o.name() + " is declared by both "
                        + other.className() + "." + other.method() + " and " + o.className() + "." + o.method()
                        + " (compiled separately): their keys share one key space");
            }
        }
        return Collections.unmodifiableList(all);
    }

    /** The operations of one {@code operations.json} (the report reads files named on its command line). */
    static List<Operation> parse(java.io.InputStream in) throws IOException {
        return parse(JsonMapper.builder().build().readTree(in));
    }

    private static List<Operation> parse(JsonNode root) {
        JsonNode format = root.get("format");
        if (format == null || !format.isInt() || format.intValue() != FORMAT) {
            throw new IllegalStateException("it has format " + format + ", this library reads format " + FORMAT
                    + ": compile it with the annotation processor of the same version");
        }
        List<Operation> found = new ArrayList<>();
        for (JsonNode op : root.get("operations")) {
            String name = text(op, "operation");
            List<String> parameters = new ArrayList<>();
            for (JsonNode p : op.get("parameterTypes")) {
                parameters.add(p.stringValue());
            }
            JsonNode compensate = op.get("compensate");
            JsonNode onStoreDown = op.get("onStoreDown");
            found.add(new Operation(name, text(op, "class"), text(op, "method"), parameters,
                    text(op, "returnType"), Tier.valueOf(text(op, "tier")), text(op, "key"),
                    Durations.parse(text(op, "ttl"), "ttl of " + name),
                    compensate == null || compensate.isNull() ? null : compensate.stringValue(),
                    Durations.parse(text(op, "lockTimeout"), "lockTimeout of " + name),
                    onStoreDown == null || !onStoreDown.isString() ? StoreDown.FAIL
                            : StoreDown.valueOf(onStoreDown.stringValue())));
        }
        return found;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isString()) {
            throw new IllegalStateException("an operation has no text field '" + field + "': " + node);
        }
        return value.stringValue();
    }

    /** Builds an {@link IdempotencyAdmin}. */
    public static final class Builder {
        private final IdempotencyStore store;
        private ResultCodec codec = JacksonResultCodec.create();
        private Clock clock = Clock.systemUTC();
        private ClassLoader classLoader;
        private IdempotencyAudit audit = new InMemoryIdempotencyAudit();

        private Builder(IdempotencyStore store) {
            this.store = Objects.requireNonNull(store, "store");
            ClassLoader context = Thread.currentThread().getContextClassLoader();
            this.classLoader = context != null ? context : IdempotencyAdmin.class.getClassLoader();
        }

        /** Encodes resolved results; give the executor's codec, so that they replay. Default: the Jackson codec. */
        public Builder codec(ResultCodec codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /** The clock of expiries and of staleness; the executor's. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Where to look for {@value IdempotencyAdmin#OPERATIONS_RESOURCE}; default: the thread's context loader. */
        public Builder classLoader(ClassLoader classLoader) {
            this.classLoader = Objects.requireNonNull(classLoader, "classLoader");
            return this;
        }

        /**
         * Where resolutions are written down. Default: an {@link InMemoryIdempotencyAudit}, which no other node sees
         * and a restart loses; give a durable one in production ({@code JdbcIdempotencyAudit.of(store)}).
         */
        public Builder audit(IdempotencyAudit audit) {
            this.audit = Objects.requireNonNull(audit, "audit");
            return this;
        }

        /** The admin. */
        public IdempotencyAdmin build() {
            return new IdempotencyAdmin(this);
        }
    }
}
