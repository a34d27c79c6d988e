package dev.idempotency.store.tck;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The base of the store TCK: a fresh store per test, a {@link MutableClock} that the test moves, and helpers to build
 * claim requests the way {@link IdempotentExecutor} does (instants truncated to milliseconds).
 *
 * <p>Extend the deepest layer your store supports, and implement {@link #createStore()}:
 * <ol>
 *   <li>{@link AbstractStoreClaimTest}: claim, in flight, replay, mismatch, complete, release;</li>
 *   <li>{@link AbstractStoreLeaseTest}: stale claims, takeover, needs review, resolve;</li>
 *   <li>{@link AbstractStoreExpiryTest}: expiry and purge;</li>
 *   <li>{@link AbstractStoreConcurrencyTest}: many threads on one key, and the executor fuzz;</li>
 *   <li>{@link AbstractStoreTransactionTest}: the same inside outer transactions (a store that joins them).</li>
 * </ol>
 */
public abstract class AbstractStoreTest {

    /** Where the clock starts in every test. */
    protected static final Instant START = Instant.parse("2026-03-01T10:00:00.123Z");

    /** The clock of every request and executor of the test. */
    protected final MutableClock clock = MutableClock.at(START);

    /** The store under test, fresh for each test. */
    protected IdempotencyStore store;

    /** Makes each test's keys its own, so that a store shared between tests still isolates them. */
    private final String keyPrefix = UUID.randomUUID().toString().substring(0, 8) + ":";

    /** A new, empty store: the purge tests count what they delete. Called before each test. */
    protected abstract IdempotencyStore createStore() throws Exception;

    /** Frees what {@link #createStore()} made (drop a table, close a pool). Called after each test. */
    protected void destroyStore(IdempotencyStore store) throws Exception {
    }

    /** How the executor sees the caller's transaction: none unless a transactional layer says otherwise. */
    protected TransactionBridge transactionBridge() {
        return TransactionBridge.NONE;
    }

    @BeforeEach
    final void setUpStore() throws Exception {
        clock.set(START);
        store = createStore();
    }

    @AfterEach
    final void tearDownStore() throws Exception {
        if (store != null) {
            destroyStore(store);
        }
    }

    /**
     * Whether the store confirms every decision that depends on time ({@code takeOver}, {@code
     * markNeedsReviewIfStale}, {@code purgeExpired}) against a clock of its own that every node shares, a database's,
     * rather than the instant it is given. The JDBC store does; the in-memory store judges by the instant it is given.
     * The tests of the shared clock then expect a node whose clock runs ahead to be refused.
     */
    protected boolean hasSharedClock() {
        return false;
    }

    /**
     * The real current instant, truncated to milliseconds: the tests of a store's own clock need instants relative to
     * it ({@link #START}, where {@link #clock} starts, is in the past of any real clock).
     */
    protected static Instant realNow() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }

    /** The current instant of the clock, truncated to milliseconds as the executor does. */
    protected Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** A key unique to this test. */
    protected String key(String name) {
        return keyPrefix + name;
    }

    /**
     * An executor on the store, the test's clock and {@link #transactionBridge()}; every thread of the fuzz may wait
     * on one key at once (the executor's cap on waiters per key is its own rule, not the store's).
     */
    protected IdempotentExecutor executor() {
        return IdempotentExecutor.builder(store).clock(clock).transactions(transactionBridge())
                .maxWaitersPerKey(1024).build();
    }

    /** The 32-byte fingerprint of some arguments. */
    protected static byte[] fingerprint(String arguments) {
        return Keys.sha256().digest(arguments.getBytes(StandardCharsets.UTF_8));
    }

    /** The 32-byte identity of a key of operation {@code TCK.op}. */
    protected static byte[] keyHash(String key) {
        return Keys.hash("TCK.op", "", key);
    }

    /** A claim at {@link #now()}, lease 30 s, ttl 1 h, lock timeout 5 s, fingerprint of "args". */
    protected ClaimRequest request(String key) {
        return request(key, "args", now());
    }

    /** A claim at {@code now}, lease 30 s, ttl 1 h, lock timeout 5 s. */
    protected ClaimRequest request(String key, String arguments, Instant now) {
        return request(key, arguments, now, Duration.ofSeconds(30), Duration.ofSeconds(5));
    }

    /** A claim of {@code key} as the executor would build it. */
    protected ClaimRequest request(String key, String arguments, Instant now, Duration lease, Duration lockTimeout) {
        return new ClaimRequest(keyHash(key), "TCK.op", key, fingerprint(arguments), Tier.REVERSIBLE, now,
                now.plus(lease), now.plus(Duration.ofHours(1)), lockTimeout);
    }
}
