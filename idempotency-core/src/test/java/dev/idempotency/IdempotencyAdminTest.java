package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.internal.Keys;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ForwardingStore;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyAudit.Action;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.InMemoryIdempotencyAudit;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The operator's view: the inventory, and one key's state, eviction and resolution. */
class IdempotencyAdminTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private final TierRulesTest.MutableClock clock = new TierRulesTest.MutableClock(
            Instant.parse("2026-01-01T10:00:00Z"));
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final IdempotentExecutor executor = IdempotentExecutor.builder(store).clock(clock).build();
    private final IdempotencyAdmin admin = IdempotencyAdmin.builder(store).clock(clock).build();
    private final IdempotentOperation<String> orders = IdempotentOperation
            .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).ttl("1h").build();

    private static final String PAYMENTS_JSON = """
            {
              "format" : 1,
              "operations" : [
                {
                  "operation" : "payments.send",
                  "class" : "com.example.Payments$Gateway",
                  "method" : "send",
                  "parameterTypes" : [ "java.lang.String", "long" ],
                  "returnType" : "java.util.List<com.example.Receipt>",
                  "tier" : "IRREVERSIBLE",
                  "key" : "'SEND:' + #p0",
                  "ttl" : "7d",
                  "compensate" : null,
                  "lockTimeout" : "30s"
                }
              ]
            }
            """;
    private static final String ORDERS_JSON = """
            {
              "format" : 1,
              "operations" : [
                {
                  "operation" : "Orders.create",
                  "class" : "com.example.Orders",
                  "method" : "create",
                  "parameterTypes" : [ "java.lang.String" ],
                  "returnType" : "com.example.Receipt",
                  "tier" : "REVERSIBLE",
                  "key" : "#orderNo",
                  "ttl" : "24h",
                  "compensate" : "cancel",
                  "lockTimeout" : "10s"
                }
              ]
            }
            """;

    private static ClassLoader classPath(Path... roots) throws IOException {
        URL[] urls = new URL[roots.length];
        for (int i = 0; i < roots.length; i++) {
            urls[i] = roots[i].toUri().toURL();
        }
        return new URLClassLoader(urls, null);
    }

    private static Path module(Path dir, String json) throws IOException {
        Path file = dir.resolve(IdempotencyAdmin.OPERATIONS_RESOURCE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, json);
        return dir;
    }

    @Test
    void operationsAreEveryInventoryOnTheClassPathSortedByName(@TempDir Path a, @TempDir Path b) throws IOException {
        IdempotencyAdmin withTwoModules = IdempotencyAdmin.builder(store)
                .classLoader(classPath(module(a, PAYMENTS_JSON), module(b, ORDERS_JSON))).build();

        List<IdempotencyAdmin.Operation> operations = withTwoModules.operations();
        assertThat(operations).extracting(IdempotencyAdmin.Operation::name)
                .containsExactly("Orders.create", "payments.send");
        assertThat(operations.get(1)).isEqualTo(new IdempotencyAdmin.Operation("payments.send",
                "com.example.Payments$Gateway", "send", List.of("java.lang.String", "long"),
                "java.util.List<com.example.Receipt>", Tier.IRREVERSIBLE, "'SEND:' + #p0", Duration.ofDays(7), null,
                Duration.ofSeconds(30)));
        assertThat(operations.get(0).compensate()).isEqualTo("cancel");
        assertThat(operations.get(0).ttl()).isEqualTo(Duration.ofHours(24));
        assertThatThrownBy(() -> operations.add(operations.get(0))).isInstanceOf(UnsupportedOperationException.class);
        assertThat(withTwoModules.operation("payments.send")).get()
                .extracting(IdempotencyAdmin.Operation::tier).isEqualTo(Tier.IRREVERSIBLE);
        assertThat(withTwoModules.operation("nope")).isEmpty();
    }

    @Test
    void noInventoryIsAnEmptyList(@TempDir Path empty) throws IOException {
        assertThat(IdempotencyAdmin.builder(store).classLoader(classPath(empty)).build().operations()).isEmpty();
    }

    @Test
    void anUnreadableInventoryNamesItsFile(@TempDir Path a, @TempDir Path b) throws IOException {
        IdempotencyAdmin future = IdempotencyAdmin.builder(store)
                .classLoader(classPath(module(a, "{ \"format\" : 2, \"operations\" : [ ] }"))).build();
        assertThatThrownBy(future::operations).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(a.getFileName().toString()).hasMessageContaining("this library reads format 1");
        IdempotencyAdmin broken = IdempotencyAdmin.builder(store)
                .classLoader(classPath(module(b, "{ \"format\" : 1, \"operations\" : [ { \"operation\" : 3 } ] }")))
                .build();
        assertThatThrownBy(broken::operations).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(b.getFileName().toString()).hasMessageContaining("'operation'");
    }

    @Test
    void findShowsTheStateOfAKey() {
        assertThat(admin.find("Orders.create", "ORDER:1")).isEmpty();
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");

        IdempotencyAdmin.Entry entry = admin.find("Orders.create", "ORDER:1").orElseThrow();
        assertThat(entry.argumentsDigest()).matches("[0-9a-f]{64}");
        assertThat(entry).isEqualTo(new IdempotencyAdmin.Entry("Orders.create", "ORDER:1", Tier.REVERSIBLE,
                Status.COMPLETED, true, clock.instant(), clock.instant().plus(Duration.ofHours(1)), null, false,
                false, entry.argumentsDigest()));
        executor.execute(orders, "ORDER:2", new Object[] {"ORDER:1"}, () -> "receipt");
        executor.execute(orders, "ORDER:3", new Object[] {"ORDER:3"}, () -> "receipt");
        assertThat(admin.find("Orders.create", "ORDER:2").orElseThrow().argumentsDigest())
                .as("the same arguments under another key").isEqualTo(entry.argumentsDigest());
        assertThat(admin.find("Orders.create", "ORDER:3").orElseThrow().argumentsDigest())
                .isNotEqualTo(entry.argumentsDigest());
        clock.advance(Duration.ofHours(1));
        assertThat(admin.find("Orders.create", "ORDER:1")).get().extracting(IdempotencyAdmin.Entry::expired)
                .isEqualTo(true);
        assertThat(admin.find("Orders.other", "ORDER:1")).as("the operation is part of the identity").isEmpty();
    }

    @Test
    void aScopedKeyIsFoundOnlyInItsScope() {
        IdempotentExecutor tenantA = IdempotentExecutor.builder(store).clock(clock).scope(() -> "tenant-a").build();
        tenantA.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");

        assertThat(admin.find("Orders.create", "tenant-a", "ORDER:1")).isPresent();
        assertThat(admin.find("Orders.create", "ORDER:1")).isEmpty();
        assertThat(admin.find("Orders.create", "tenant-b", "ORDER:1")).isEmpty();
        assertThat(admin.evict("Orders.create", "tenant-a", "ORDER:1", BY)).isTrue();
        assertThat(admin.find("Orders.create", "tenant-a", "ORDER:1")).isEmpty();
    }

    @Test
    void theKeyIsNormalizedAsTheExecutorDoes() {
        executor.execute(orders, "CAF\u00c9", new Object[] {"x"}, () -> "receipt");
        assertThat(admin.find("Orders.create", "CAFE\u0301")).as("NFC, like the executor").isPresent();
        assertThatThrownBy(() -> admin.find("Orders.create", " ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Orders.create").hasMessageContaining("the key is blank");
    }

    @Test
    void evictedTheNextCallRunsAgain() {
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "first");
        assertThat(admin.evict("Orders.create", "ORDER:1", BY)).isTrue();
        assertThat(admin.evict("Orders.create", "ORDER:1", BY)).isFalse();
        assertThat(executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "second"))
                .isEqualTo("second");
    }

    @Test
    void onlyAnUnknownOutcomeIsResolved() {
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");
        assertThatThrownBy(() -> admin.release("Orders.create", "ORDER:1", BY))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Orders.create key 'ORDER:1' is COMPLETED").hasMessageContaining("evict");
        assertThatThrownBy(() -> admin.resolveExecuted("Orders.create", "ORDER:1", "x", ResultType.of(String.class),
                Duration.ofHours(1), BY)).isInstanceOf(IllegalStateException.class);
        assertThat(admin.release("Orders.create", "ORDER:2", BY)).isFalse();
        assertThat(admin.resolveExecuted("Orders.create", "ORDER:2", "x", ResultType.of(String.class),
                Duration.ofHours(1), BY)).isFalse();
    }

    @Test
    void anInFlightClaimIsResolvedOnlyOnceItsLeaseRanOut() {
        IdempotentOperation<String> slow = IdempotentOperation
                .builder("Orders.create", Tier.REVERSIBLE, ResultType.of(String.class)).lease(Duration.ofSeconds(30))
                .build();
        // an attempt in flight: the admin looks at its key from inside the method
        assertThatThrownBy(() -> executor.execute(slow, "ORDER:9", new Object[] {"ORDER:9"}, () -> {
            assertThatThrownBy(() -> admin.release("Orders.create", "ORDER:9", BY))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("an attempt may still be running");
            assertThat(admin.find("Orders.create", "ORDER:9")).get().extracting(IdempotencyAdmin.Entry::status,
                    IdempotencyAdmin.Entry::leaseUntil).containsExactly(Status.IN_FLIGHT,
                    clock.instant().plus(Duration.ofSeconds(30)));
            clock.advance(Duration.ofSeconds(31));
            assertThat(admin.find("Orders.create", "ORDER:9")).get().extracting(IdempotencyAdmin.Entry::stale)
                    .isEqualTo(true);
            assertThat(admin.resolveExecuted("Orders.create", "ORDER:9", "by hand", ResultType.of(String.class),
                    Duration.ofHours(1), BY)).isTrue();
            return "too late";
        })).as("the attempt that outlived its lease learns that its claim was resolved meanwhile")
                .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("taken over or evicted");
        assertThat(executor.execute(slow, "ORDER:9", new Object[] {"ORDER:9"}, () -> "again"))
                .isEqualTo("by hand");
    }

    @Test
    void everyResolutionIsAuditedWithWhoWhenWhyAndTheStateBefore() {
        IdempotentOperation<String> refund = IdempotentOperation
                .builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(String.class))
                .lease(Duration.ofSeconds(5)).build();
        IdempotentExecutor crashing = IdempotentExecutor.builder(new TierRulesTest.DiesBeforeRecording(store))
                .clock(clock).scope(() -> "tenant-a").build();
        assertThatThrownBy(() -> crashing.execute(refund, "R-1", new Object[0], () -> "paid"))
                .isInstanceOf(IdempotencyStoreException.class);
        clock.advance(Duration.ofSeconds(6));
        Instant resolvedAt = clock.instant();

        ResolvedBy alice = new ResolvedBy("alice", "gateway statement shows no payout");
        assertThat(admin.release("Payments.refund", "tenant-a", "R-1", alice)).isTrue();
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");
        clock.advance(Duration.ofSeconds(1));
        ResolvedBy bob = new ResolvedBy("bob", "duplicate order cancelled with the customer");
        assertThat(admin.evict("Orders.create", "ORDER:1", bob)).isTrue();

        assertThat(admin.history("Payments.refund", "tenant-a", "R-1")).singleElement().satisfies(e -> {
            assertThat(e.action()).isEqualTo(Action.RELEASED);
            assertThat(e.by()).isEqualTo(alice);
            assertThat(e.at()).isEqualTo(resolvedAt);
            assertThat(e.tier()).isEqualTo(Tier.IRREVERSIBLE);
            assertThat(e.before()).as("a stale claim, in flight past its lease").isEqualTo(Status.IN_FLIGHT);
            assertThat(e.key()).isEqualTo("R-1");
        });
        assertThat(admin.history("Payments.refund", "R-1")).as("another scope's key has no history").isEmpty();
        assertThat(admin.resolutions(10)).extracting(IdempotencyAudit.Entry::action, e -> e.by().actor())
                .as("newest first").containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Action.EVICTED, "bob"),
                        org.assertj.core.groups.Tuple.tuple(Action.RELEASED, "alice"));
        assertThat(admin.resolutions(1)).hasSize(1);
        assertThat(admin.history("Orders.create", "ORDER:1")).extracting(IdempotencyAudit.Entry::action)
                .as("the overload without a scope").containsExactly(Action.EVICTED);
    }

    @Test
    void aResolutionAsExecutedIsAuditedToo() {
        IdempotentOperation<String> refund = IdempotentOperation
                .builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(String.class))
                .lease(Duration.ofSeconds(5)).build();
        IdempotentExecutor crashing = IdempotentExecutor.builder(new TierRulesTest.DiesBeforeRecording(store))
                .clock(clock).build();
        assertThatThrownBy(() -> crashing.execute(refund, "R-9", new Object[0], () -> "paid"))
                .isInstanceOf(IdempotencyStoreException.class);
        clock.advance(Duration.ofSeconds(6));
        assertThat(admin.resolveExecuted("Payments.refund", "R-9", "receipt", ResultType.of(String.class),
                Duration.ofHours(1), BY)).isTrue();
        assertThat(admin.history("Payments.refund", "R-9")).singleElement()
                .satisfies(e -> assertThat(e.toString()).isEqualTo("RESOLVED_EXECUTED Payments.refund 'R-9'"
                        + " (IRREVERSIBLE, was IN_FLIGHT) by test-operator at " + clock.instant()
                        + ": checked by the test"));
    }

    @Test
    void anActorAndAReasonMayBeAsLongAsTheAuditTableHoldsAndNoLonger() {
        assertThat(new ResolvedBy("a".repeat(ResolvedBy.MAX_ACTOR), "r".repeat(ResolvedBy.MAX_REASON)).actor())
                .hasSize(255);
        assertThatThrownBy(() -> new ResolvedBy("a".repeat(ResolvedBy.MAX_ACTOR + 1), "checked"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 255");
        assertThatThrownBy(() -> new ResolvedBy("alice", "r".repeat(ResolvedBy.MAX_REASON + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 1000");
    }

    @Test
    void aResolutionIsRefusedWithoutAnActorOrAReason() {
        assertThatThrownBy(() -> new ResolvedBy(" ", "checked")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs an actor");
        assertThatThrownBy(() -> new ResolvedBy("alice", "")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("alice").hasMessageContaining("needs a reason");
        assertThatThrownBy(() -> new ResolvedBy("alice\nroot", "checked"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control characters");
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");
        assertThatThrownBy(() -> admin.evict("Orders.create", "ORDER:1", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("who decided it");
        assertThat(admin.find("Orders.create", "ORDER:1")).as("nothing was evicted").isPresent();
    }

    @Test
    void anAuditThatFailsNamesTheResolutionThatStands() {
        IdempotencyAudit broken = new IdempotencyAudit() {
            @Override
            public void append(byte[] keyHash, Entry entry) {
                throw new IllegalStateException("audit table is read-only");
            }

            @Override
            public List<Entry> history(byte[] keyHash, int limit) {
                return List.of();
            }

            @Override
            public List<Entry> recent(int limit) {
                return List.of();
            }
        };
        IdempotencyAdmin audited = IdempotencyAdmin.builder(store).clock(clock).audit(broken).build();
        executor.execute(orders, "ORDER:1", new Object[] {"ORDER:1"}, () -> "receipt");
        assertThatThrownBy(() -> audited.evict("Orders.create", "ORDER:1", BY))
                .isInstanceOf(IdempotencyStoreException.class).hasMessageContaining("EVICTED Orders.create 'ORDER:1'")
                .hasMessageContaining("test-operator").hasMessageContaining("audit table is read-only")
                .hasMessageContaining("the resolution stands");
    }

    @Test
    void theInMemoryAuditKeepsTheLatestEntries() {
        InMemoryIdempotencyAudit small = new InMemoryIdempotencyAudit(2);
        IdempotencyAdmin audited = IdempotencyAdmin.builder(store).clock(clock).audit(small).build();
        for (int i = 1; i <= 3; i++) {
            executor.execute(orders, "ORDER:" + i, new Object[] {"ORDER:" + i}, () -> "receipt");
            audited.evict("Orders.create", "ORDER:" + i, BY);
        }
        assertThat(small.recent(10)).extracting(IdempotencyAudit.Entry::key).containsExactly("ORDER:3", "ORDER:2");
        assertThat(audited.history("Orders.create", "ORDER:1")).isEmpty();
        executor.execute(orders, "ORDER:3", new Object[] {"ORDER:3"}, () -> "again");
        audited.evict("Orders.create", "ORDER:3", BY);
        assertThat(small.history(Keys.hash("Orders.create", "", "ORDER:3"), 1)).as("at most the limit").hasSize(1);
        assertThat(small.history(Keys.hash("Orders.create", "", "ORDER:3"), 2)).hasSize(2);
        assertThat(new InMemoryIdempotencyAudit(1).recent(1)).isEmpty();
        assertThatThrownBy(() -> new InMemoryIdempotencyAudit(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aResolvedResultIsEncodedAsTheDeclaredGenericType() {
        IdempotentOperation<List<Instant>> times = IdempotentOperation
                .builder("Clock.ticks", Tier.IRREVERSIBLE, new ResultType<List<Instant>>() { })
                .lease(Duration.ofSeconds(5)).build();
        IdempotentExecutor crashing = IdempotentExecutor.builder(new TierRulesTest.DiesBeforeRecording(store))
                .clock(clock).build();
        assertThatThrownBy(() -> crashing.execute(times, "T", new Object[0], () -> List.of(clock.instant())))
                .isInstanceOf(IdempotencyStoreException.class);
        clock.advance(Duration.ofSeconds(6));

        Instant tick = Instant.parse("2026-01-01T10:00:00Z");
        assertThat(admin.resolveExecuted("Clock.ticks", "T", List.of(tick), new ResultType<List<Instant>>() { },
                Duration.ofHours(1), BY)).isTrue();
        List<Instant> replayed = executor.execute(times, "T", new Object[0], () -> List.of());
        assertThat(replayed).containsExactly(tick);
        assertThat(replayed.get(0)).isInstanceOf(Instant.class);
    }

    // ---- the operator's decision lands only on the state the operator saw --------------------------------------

    /** A store that runs a concurrent change once, right after the next {@code find}: what the operator read. */
    private static final class RacingStore extends ForwardingStore {
        private final List<Runnable> afterFind = new ArrayList<>();

        RacingStore() {
            super(new InMemoryIdempotencyStore());
        }

        @Override
        public Optional<IdempotencyRecord> find(byte[] keyHash) {
            Optional<IdempotencyRecord> found = super.find(keyHash);
            if (!afterFind.isEmpty()) {
                afterFind.remove(0).run();
            }
            return found;
        }
    }

    private ClaimRequest claimAt(String key, Instant now) {
        return new ClaimRequest(Keys.hash("Orders.create", "", key), "Orders.create", key, new byte[32],
                Tier.REVERSIBLE, now, now.plusSeconds(30), now.plus(Duration.ofHours(1)), Duration.ofSeconds(1));
    }

    @Test
    void aReleaseNeverDeletesAClaimTakenOverAfterTheOperatorReadTheStaleOne() {
        RacingStore racing = new RacingStore();
        IdempotencyAdmin operator = IdempotencyAdmin.builder(racing).clock(clock).build();
        ClaimRequest crashed = claimAt("ORDER:1", clock.instant());
        racing.claim(crashed);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord stale = racing.find(crashed.keyHash()).orElseThrow();
        ClaimRequest retry = claimAt("ORDER:1", clock.instant());
        racing.afterFind.add(() -> assertThat(racing.takeOver(retry, stale).isAcquired()).isTrue());

        assertThatThrownBy(() -> operator.release("Orders.create", "ORDER:1", BY))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("release: operation Orders.create key 'ORDER:1' changed since it was read")
                .hasMessageContaining("find the key again");
        assertThat(racing.find(crashed.keyHash())).as("the retry's live claim is kept: no third caller may run")
                .contains(retry.toInFlightRecord());
        // read again, the operator sees the live claim and is refused
        assertThatThrownBy(() -> operator.release("Orders.create", "ORDER:1", BY))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("an attempt may still be running");
    }

    @Test
    void aResolutionNeverOverwritesTheOutcomeTheSlowOwnerRecordedAfterTheOperatorRead() {
        RacingStore racing = new RacingStore();
        IdempotencyAdmin operator = IdempotencyAdmin.builder(racing).clock(clock).build();
        ClaimRequest slow = claimAt("ORDER:2", clock.instant());
        racing.claim(slow);
        clock.advance(Duration.ofMinutes(1));
        byte[] real = "\"the real receipt\"".getBytes(StandardCharsets.UTF_8);
        Instant expiresAt = clock.instant().plus(Duration.ofHours(1));
        racing.afterFind.add(() -> assertThat(racing.complete(slow.keyHash(), slow.leaseUntil(), real, expiresAt))
                .isTrue());

        assertThatThrownBy(() -> operator.resolveExecuted("Orders.create", "ORDER:2", "by hand",
                ResultType.of(String.class), Duration.ofDays(1), BY))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("resolveExecuted: operation Orders.create key 'ORDER:2' changed since it was"
                        + " read as IN_FLIGHT");
        IdempotencyRecord kept = racing.find(slow.keyHash()).orElseThrow();
        assertThat(kept.status()).isEqualTo(Status.COMPLETED);
        assertThat(kept.result()).isEqualTo(real);

        ClaimRequest slower = claimAt("ORDER:3", clock.instant());
        racing.claim(slower);
        clock.advance(Duration.ofMinutes(1));
        racing.afterFind.add(() -> racing.complete(slower.keyHash(), slower.leaseUntil(), real, expiresAt));
        assertThatThrownBy(() -> operator.release("Orders.create", "ORDER:3", BY))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("changed since it was read");
        assertThat(racing.find(slower.keyHash()).orElseThrow().result()).as("the real outcome is not deleted")
                .isEqualTo(real);
    }

    @Test
    void evictDeletesWhateverIsThereEvenIfItChangedAfterTheRead() {
        RacingStore racing = new RacingStore();
        IdempotencyAdmin operator = IdempotencyAdmin.builder(racing).clock(clock).build();
        ClaimRequest first = claimAt("ORDER:4", clock.instant());
        racing.claim(first);
        clock.advance(Duration.ofMinutes(1));
        IdempotencyRecord stale = racing.find(first.keyHash()).orElseThrow();
        racing.afterFind.add(() -> racing.takeOver(claimAt("ORDER:4", clock.instant()), stale));

        assertThat(operator.evict("Orders.create", "ORDER:4", BY)).isTrue();
        assertThat(racing.find(first.keyHash())).isEmpty();
        assertThat(operator.evict("Orders.create", "ORDER:4", BY)).isFalse();
    }
}
