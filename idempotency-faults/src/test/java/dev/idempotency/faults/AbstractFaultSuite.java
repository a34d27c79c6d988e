package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.faults.History.Type;
import dev.idempotency.faults.Shop.Misbehaviour;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.SoftAssertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The fault-injection suite (issue 10), one body for every database: a real Spring application
 * ({@link FaultApp}) on the database of the subclass, faults injected into real runs, each scenario asserting its
 * rule of the engine (ENGINE.md of issue 10, docs/design.md), then a randomized {@link Storm} judged by the
 * {@link HistoryChecker}. Prints once, at the end, the line {@code .ci/run} greps:
 * {@code faults <db>: <N> injected, <K> keys, duplicated effects <d>, wrong answers <w>, stuck keys <s>}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractFaultSuite {

    /** Connections: 16 storm threads, each with its transaction's and an outside one, and the scenarios' own. */
    static final int POOL_SIZE = 40;

    protected FaultDatabase database;
    protected FaultInjector injector;
    protected History history;
    protected Pauses pauses;
    protected FaultApp app;
    protected JdbcTemplate jdbc;
    protected ExecutorService threads;
    /** Faults of the suite that are not the injector's: misbehaviours, rollbacks, killed JVMs, skewed clocks. */
    protected final AtomicInteger otherFaults = new AtomicInteger();
    private Storm.@Nullable Result storm;

    /** The database under test; set and unreachable, this must fail, never skip. */
    protected abstract FaultDatabase openDatabase();

    /** Thrown by a caller's later step, after the idempotent call returned. */
    static final class LaterStepFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LaterStepFailed() {
            super("a later step of the caller failed");
        }
    }

    @BeforeAll
    void start() {
        database = openDatabase();
        database.createTables();
        jdbc = new JdbcTemplate(database.pool());
        jdbc.update("INSERT INTO " + database.tables.accounts() + " (id, balance) VALUES ('A', 0), ('B', 0)");
        injector = new FaultInjector(database);
        history = new History();
        pauses = new Pauses();
        app = FaultApp.start(injector, database.tables, history, pauses, FaultApp.Options.node("main"));
        threads = Executors.newCachedThreadPool();
    }

    @AfterEach
    void calm() {
        injector.disarm();
        Shop.misbehave(null);
    }

    @AfterAll
    void stop() {
        try {
            if (database == null) {
                return; // the database could not be opened: the suite failed in start()
            }
            Storm.Result r = storm;
            HistoryChecker.Verdict v = r == null ? null : r.verdict();
            // the one line .ci/run greps from the surefire output
            System.out.println("faults " + database.kind.label + ": " + (injector.injected() + otherFaults.get())
                    + " injected, " + (v == null ? 0 : v.keys()) + " keys, duplicated effects "
                    + (v == null ? 0 : v.duplicatedEffects()) + ", wrong answers " + (v == null ? 0 : v.wrongAnswers())
                    + ", stuck keys " + (v == null ? 0 : v.stuckKeys())
                    + (v == null ? " (the storm did not run)" : ""));
        } finally {
            try {
                if (threads != null) {
                    threads.shutdownNow();
                }
                if (app != null) {
                    app.close();
                }
            } finally {
                if (database != null) {
                    database.close();
                }
            }
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 13);
    }

    /** Committed business rows of one kind and key, read from the database. */
    int rows(String kind, String key) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM " + database.tables.business()
                + " WHERE kind = ? AND ref = ?", Integer.class, kind, key);
        return n == null ? 0 : n;
    }

    List<String> committed(String kind, String key) {
        return jdbc.queryForList("SELECT val FROM " + database.tables.business() + " WHERE kind = ? AND ref = ?",
                String.class, kind, key);
    }

    @Nullable String status(String idemKey) {
        List<String> s = jdbc.queryForList("SELECT status FROM " + database.tables.idempotency()
                + " WHERE idem_key = ?", String.class, idemKey);
        return s.isEmpty() ? null : s.get(0);
    }

    @FunctionalInterface
    interface Call {
        String call() throws Exception;
    }

    /** Sneaks a checked exception out of a transaction callback unchanged. */
    static String unchecked(Call call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw Storm.sneaky(e);
        }
    }

    /** Retries a call until it answers (a value), as long as it says "in progress"; at most 20 seconds. */
    static String retryWhileInProgress(Call call) {
        return await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .ignoreException(IdempotencyInProgressException.class)
                .until(call::call, Objects::nonNull);
    }

    /** The IdempotencyOutcomeUnknownException in the chain of {@code t}, or null. */
    static @Nullable Throwable outcomeUnknownIn(@Nullable Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof IdempotencyOutcomeUnknownException) {
                return c;
            }
        }
        return null;
    }

    /** What a call that should have failed did instead, for a failure message. */
    static String describe(@Nullable Throwable t) {
        return t == null ? "no exception: the call ran (or replayed) instead" : t.toString();
    }

    // the harness itself -------------------------------------------------------------------------------------------

    @Test
    void harnessTheArmedKillReallyKillsTheConnection() throws Exception {
        String id;
        try (Connection c = injector.getConnection()) {
            c.setAutoCommit(false);
            id = database.killsForReal() ? database.sessionId(c) : null;
            injector.arm(Step.CLAIM, "Harness.op", "HARNESS:1");
            Throwable failed = catchThrowable(() -> {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + database.tables.idempotency()
                        + " (key_hash) VALUES (?)")) {
                    ps.setBytes(1, FaultInjector.keyHash("Harness.op", "HARNESS:1"));
                    ps.executeUpdate();
                }
            });
            assertThat(injector.disarm("Harness.op", "HARNESS:1")).as("the armed step struck").isEqualTo(Step.CLAIM);
            assertThat(failed).isInstanceOf(SQLException.class);
            if (id != null) {
                assertThat(database.alive(id)).as("the server no longer lists session " + id).isFalse();
            }
            assertThat(catchThrowable(() -> c.createStatement().executeQuery("SELECT 1")))
                    .as("every later call on the killed connection fails").isInstanceOf(SQLException.class);
        }
        // the pool evicted it: the next connections work
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + database.tables.accounts(), Integer.class))
                .isEqualTo(2);
    }

    @Test
    void harnessALostCommitReplyCommittedAndAKilledCommitDidNot() throws Exception {
        String lost = unique("lost");
        String killed = unique("killed");
        for (String key : List.of(lost, killed)) {
            try (Connection c = injector.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + database.tables.business()
                        + " (id, kind, ref, val) VALUES (?, 'HARNESS', ?, 'x')")) {
                    ps.setString(1, key);
                    ps.setString(2, key);
                    ps.executeUpdate();
                }
                injector.arm(key == lost ? Step.LOST_COMMIT_REPLY : Step.COMMIT);
                assertThat(catchThrowable(c::commit)).isInstanceOf(SQLException.class);
                assertThat(injector.disarm()).isNotNull();
            }
        }
        assertThat(rows("HARNESS", lost)).as("the commit reached the database, its reply was lost").isEqualTo(1);
        assertThat(rows("HARNESS", killed)).as("the connection died before its commit").isZero();
    }

    // 1. savepoints ------------------------------------------------------------------------------------------------

    @Test
    void savepointRollbackCompensatesOnceAndTheRetryRunsAgain() {
        savepointRollback(app);
    }

    @Test
    void savepointRollbackWithACaffeinePrefilterReplaysNoGhost() {
        try (FaultApp cached = FaultApp.start(injector, database.tables, history, pauses,
                FaultApp.Options.node("cached").withPrefilter())) {
            savepointRollback(cached);
        }
    }

    @Test
    void savepointRollbackTheRetryInsideTheSameOuterTransactionRunsAgain() {
        String key = unique("sp-same");
        otherFaults.incrementAndGet();
        AtomicReference<String> held = new AtomicReference<>();
        String retried = app.tx().execute(outer -> {
            try {
                app.nested().executeWithoutResult(nested -> {
                    held.set(app.shop.holdFunds(key));
                    throw new LaterStepFailed();
                });
            } catch (LaterStepFailed expected) {
                // the caller retries at once, in the same outer transaction
            }
            return app.shop.holdFunds(key);
        });
        String first = held.get();

        SoftAssertions rules = new SoftAssertions();
        rules.assertThat(retried).as("the retry in the same transaction ran again, no replay of the rolled-back"
                + " attempt").isNotEqualTo(first);
        rules.assertThat(history.values(key, Type.EFFECT)).containsExactly(first, retried);
        rules.assertThat(committed("HOLD", key)).as("the outer commit kept the retry's row only")
                .containsExactly(retried);
        rules.assertThat(app.shop.holdFunds(key)).as("and replays it").isEqualTo(retried);
        rules.assertThat(history.values(key, Type.COMPENSATION)).as("the rolled-back attempt compensated once")
                .containsExactly(first);
        rules.assertAll();
    }

    private void savepointRollback(FaultApp on) {
        String key = unique("sp");
        otherFaults.incrementAndGet();
        AtomicReference<String> held = new AtomicReference<>();
        on.tx().executeWithoutResult(outer -> {
            try {
                on.nested().executeWithoutResult(nested -> {
                    held.set(on.shop.holdFunds(key));
                    throw new LaterStepFailed(); // rolls back to the savepoint
                });
            } catch (LaterStepFailed expected) {
                // the outer transaction goes on and commits
            }
        });
        String first = held.get();

        String retried = on.shop.holdFunds(key);
        String again = on.shop.holdFunds(key);

        // every rule at once: the report names each one broken
        SoftAssertions rules = new SoftAssertions();
        rules.assertThat(retried).as("the retry ran again: no ghost replay of the rolled-back attempt")
                .isNotEqualTo(first);
        rules.assertThat(history.values(key, Type.EFFECT)).as("ran twice: the rolled-back attempt and the retry")
                .containsExactly(first, retried);
        rules.assertThat(committed("HOLD", key)).as("the savepoint took the first row, the retry's committed")
                .containsExactly(retried);
        rules.assertThat(again).as("the retry's outcome replays").isEqualTo(retried);
        rules.assertThat(history.values(key, Type.COMPENSATION))
                .as("the savepoint rollback compensated the first attempt once, the committed one never")
                .containsExactly(first);
        rules.assertAll();
    }

    // 2. unknown commit outcome ------------------------------------------------------------------------------------

    @Test
    void lostCommitReplyNeitherCompensatesNorRunsAgainTheRetryReplays() {
        String key = unique("lost");
        AtomicReference<String> ran = new AtomicReference<>();
        AtomicInteger completion = new AtomicInteger(-1);
        Throwable thrown = catchThrowable(() -> app.tx().executeWithoutResult(s -> {
            ran.set(app.shop.holdFunds(key));
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    completion.set(status);
                }
            });
            injector.arm(Step.LOST_COMMIT_REPLY);
        }));
        assertThat(injector.disarm()).isEqualTo(Step.LOST_COMMIT_REPLY);
        assertThat(thrown).isInstanceOf(TransactionSystemException.class);
        assertThat(completion).as("Spring reports the commit's outcome as unknown")
                .hasValue(TransactionSynchronization.STATUS_UNKNOWN);
        assertThat(committed("HOLD", key)).as("the commit reached the database").containsExactly(ran.get());
        assertThat(history.values(key, Type.COMPENSATION)).as("an unknown outcome is not compensated").isEmpty();

        String retried = retryWhileInProgress(() -> app.shop.holdFunds(key));

        assertThat(retried).as("the retry replays the committed outcome").isEqualTo(ran.get());
        assertThat(history.values(key, Type.EFFECT)).as("the method ran once").containsExactly(ran.get());
        assertThat(committed("HOLD", key)).containsExactly(ran.get());
        assertThat(history.values(key, Type.COMPENSATION)).isEmpty();
    }

    // 3. checked exceptions ----------------------------------------------------------------------------------------

    @Test
    void checkedExceptionAfterAWriteLeavesNoRowBehindTheRetryRunsOnce() throws Exception {
        String key = unique("checked");
        otherFaults.incrementAndGet();
        Shop.misbehave(Misbehaviour.CHECKED_AFTER_WRITE);
        assertThat(catchThrowable(() -> app.shop.placeOrder(key)))
                .as("the caller gets the checked exception unchanged").isInstanceOf(OrderRejectedException.class);
        Shop.misbehave(null);

        String retried = app.shop.placeOrder(key);

        assertThat(committed("ORDER", key)).as("exactly one order row after the retry").containsExactly(retried);
        assertThat(app.shop.placeOrder(key)).isEqualTo(retried);
        assertThat(history.count(key, Type.EFFECT)).isEqualTo(2);
    }

    // 4. IRREVERSIBLE inside a caller's transaction ----------------------------------------------------------------

    @Test
    void irreversibleCallersRollbackAfterThePayoutStopsEveryRetryForReview() {
        String key = unique("pay-rb");
        otherFaults.incrementAndGet();
        Throwable thrown = catchThrowable(() -> app.tx().executeWithoutResult(s -> {
            app.shop.payout(key);
            throw new LaterStepFailed();
        }));
        assertThat(thrown).isInstanceOf(LaterStepFailed.class);
        assertThat(history.count(key, Type.EFFECT)).isEqualTo(1);

        for (int i = 0; i < 2; i++) {
            Throwable t = catchThrowable(() -> retryWhileInProgress(() -> app.shop.payout(key)));
            assertThat(outcomeUnknownIn(t)).as("retry %d after the rollback: a hard stop, never a second payout;"
                    + " got %s", i, describe(t)).isNotNull();
        }
        assertThat(history.count(key, Type.EFFECT)).as("the payout went out once").isEqualTo(1);
        assertThat(status("PAY:" + key)).isEqualTo("NEEDS_REVIEW");
    }

    @Test
    void irreversibleAnExceptionListedInReleaseOnReleasesTheKey() {
        String key = unique("pay-refused");
        otherFaults.incrementAndGet();
        Shop.misbehave(Misbehaviour.REFUSED_BEFORE_EFFECT);
        Throwable thrown = catchThrowable(() -> app.tx().execute(s -> app.shop.payout(key)));
        assertThat(thrown).isInstanceOf(GatewayRefusedException.class);
        assertThat(history.count(key, Type.EFFECT)).isZero();

        String paid = app.tx().execute(s -> app.shop.payout(key));

        assertThat(history.values(key, Type.EFFECT)).as("the retry ran").containsExactly(paid);
        assertThat(app.shop.payout(key)).isEqualTo(paid);
    }

    @Test
    void irreversibleAnyOtherExceptionLeavesTheOutcomeUnknown() {
        String key = unique("pay-timeout");
        otherFaults.incrementAndGet();
        Shop.misbehave(Misbehaviour.TIMEOUT_AFTER_EFFECT);
        Throwable thrown = catchThrowable(() -> app.tx().execute(s -> app.shop.payout(key)));
        assertThat(thrown).isInstanceOf(GatewayTimeoutException.class);

        Throwable t = catchThrowable(() -> retryWhileInProgress(() -> app.tx().execute(s -> app.shop.payout(key))));
        assertThat(outcomeUnknownIn(t)).as("a timeout may have paid: the retry stops; got %s", describe(t))
                .isNotNull();
        assertThat(history.count(key, Type.EFFECT)).as("never a second payout").isEqualTo(1);
    }

    // connections killed at each step ------------------------------------------------------------------------------

    @ParameterizedTest(name = "killed at {0}")
    @EnumSource(value = Step.class, names = {"CLAIM", "METHOD", "RECORD", "COMMIT"})
    void reversibleConnectionKilledTheRetryEndsWithExactlyOneRow(Step step) {
        String key = unique("kill-" + step);
        injector.arm(step, "Shop.placeOrder", "ORDER:" + key);
        Throwable thrown = catchThrowable(() -> app.tx().execute(s -> unchecked(() -> app.shop.placeOrder(key))));
        assertThat(injector.disarm("Shop.placeOrder", "ORDER:" + key)).as("the fault struck").isEqualTo(step);
        assertThat(thrown).as("the caller learns that its call failed").isNotNull();

        String retried = retryWhileInProgress(() -> app.tx().execute(s -> unchecked(() -> app.shop.placeOrder(key))));

        assertThat(committed("ORDER", key)).as("exactly one committed order, the one the retry answered")
                .containsExactly(retried);
        assertThat(unchecked(() -> app.shop.placeOrder(key))).isEqualTo(retried);
    }

    @ParameterizedTest(name = "killed at {0}")
    @EnumSource(value = Step.class, names = {"CLAIM", "METHOD", "RECORD", "COMMIT"})
    void irreversibleConnectionKilledNeverPaysTwice(Step step) {
        String key = unique("kill-pay-" + step);
        injector.arm(step, "Shop.payout", "PAY:" + key);
        String first;
        try {
            first = app.tx().execute(s -> app.shop.payout(key));
        } catch (RuntimeException e) {
            first = null;
        }
        assertThat(injector.disarm("Shop.payout", "PAY:" + key)).as("the fault struck").isEqualTo(step);
        if (first != null) {
            // the connection died where it changed nothing (MariaDB commits a transaction without writes locally)
            assertThat(history.values(key, Type.EFFECT)).as("a first ok answer is the one payout")
                    .containsExactly(first);
        }

        Object answer;
        try {
            answer = retryWhileInProgress(() -> app.tx().execute(s -> app.shop.payout(key)));
        } catch (RuntimeException e) {
            answer = e;
        }
        if (answer instanceof String paid) {
            assertThat(history.values(key, Type.EFFECT)).as("an ok answer is the one payout").containsExactly(paid);
        } else {
            assertThat(outcomeUnknownIn((Throwable) answer)).as("a retry that does not pay is a hard stop, got %s",
                    answer).isNotNull();
        }
        assertThat(history.count(key, Type.EFFECT)).as("at most one payout").isLessThanOrEqualTo(1);
        if (step == Step.CLAIM) {
            assertThat(history.count(key, Type.EFFECT)).as("the claim never committed: the retry paid")
                    .isEqualTo(1);
        }
    }

    // a JVM killed between claim and record ------------------------------------------------------------------------

    @Test
    void jvmKilledAfterActingReversibleRunsOnceMoreAfterTheLease() throws Exception {
        String key = unique("jvm-rev");
        List<String> childEffects = killChildBetweenClaimAndRecord("reserve", key);

        String retried = retryWhileInProgress(() -> app.shop.reserve(key));

        assertThat(childEffects).hasSize(1);
        assertThat(history.values(key, Type.EFFECT)).as("taken over after the lease: ran once more, once")
                .containsExactly(retried);
        assertThat(app.shop.reserve(key)).isEqualTo(retried);
        assertThat(history.count(key, Type.EFFECT)).isEqualTo(1);
    }

    @Test
    void jvmKilledAfterActingIrreversibleStopsForReview() throws Exception {
        String key = unique("jvm-irr");
        List<String> childEffects = killChildBetweenClaimAndRecord("send", key);

        for (int i = 0; i < 2; i++) {
            Throwable t = catchThrowable(() -> retryWhileInProgress(() -> app.shop.send(key)));
            assertThat(outcomeUnknownIn(t)).as("retry %d: the child may have sent it, a hard stop; got %s", i,
                    describe(t)).isNotNull();
        }
        assertThat(childEffects).hasSize(1);
        assertThat(history.count(key, Type.EFFECT)).as("never sent again").isZero();
        assertThat(status("SEND:" + key)).isEqualTo("NEEDS_REVIEW");
    }

    /** Starts a child JVM that acts, then is destroyed between its claim and its record; its effects. */
    private List<String> killChildBetweenClaimAndRecord(String operation, String key) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), ChildCaller.class.getName(), database.kind.name(),
                database.url, database.tables.idempotency(), database.tables.business(), database.tables.accounts(),
                operation, key).redirectErrorStream(true);
        Process child = builder.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        List<String> transcript = new ArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (java.io.IOException e) {
                lines.add("(read failed: " + e + ")");
            }
        }, "child-reader");
        reader.setDaemon(true);
        reader.start();
        List<String> effects = new ArrayList<>();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new AssertionError("the child never said 'claimed'; it wrote:\n" + String.join("\n",
                            transcript));
                }
                transcript.add(line);
                if (line.startsWith("effect ")) {
                    effects.add(line.substring("effect ".length()));
                } else if (line.equals("claimed")) {
                    break;
                }
            }
        } finally {
            child.destroyForcibly();
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child JVM died").isTrue();
        }
        assertThat(child.isAlive()).isFalse();
        assertThat(child.exitValue()).as("destroyed, not finished").isNotZero();
        otherFaults.incrementAndGet();
        assertThat(status(operation.equals("send") ? "SEND:" + key : "RESERVE:" + key))
                .as("the child's claim is committed, with no result").isEqualTo("IN_FLIGHT");
        return effects;
    }

    // slow methods and leases --------------------------------------------------------------------------------------

    @Test
    void slowMethodRunsTenLockTimeoutsOnceDuplicatesMeanwhileAreInProgress() throws Exception {
        String key = unique("slow");
        Pauses.Pause pause = pauses.register("SLOW:" + key);
        Future<String> owner = threads.submit(() -> app.shop.slow(key));
        pause.awaitEntered();
        long start = System.nanoTime();
        int duplicates = 0;
        // the method is held until ten lock timeouts (200ms) passed, several leases (300ms): duplicates keep coming
        while (System.nanoTime() - start < Duration.ofMillis(2000).toNanos()) {
            long at = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            Throwable t = catchThrowable(() -> app.shop.slow(key));
            assertThat(t).as("duplicate %d, %d ms into the run: waits, then 'in progress', never a second run;"
                    + " got %s", duplicates, at, describe(t)).isInstanceOf(IdempotencyInProgressException.class);
            duplicates++;
        }
        pause.release();
        String result = owner.get(30, TimeUnit.SECONDS);

        assertThat(history.values(key, Type.EFFECT)).as("ran once").containsExactly(result);
        assertThat(app.shop.slow(key)).isEqualTo(result);
        assertThat(duplicates).isGreaterThanOrEqualTo(2);
    }

    // skewed clocks ------------------------------------------------------------------------------------------------

    @Test
    void aNodeWhoseClockRunsAnHourAheadNeverTakesOverALiveClaimNorRerunsALiveOutcome() throws Exception {
        String key = unique("skew");
        otherFaults.incrementAndGet();
        try (FaultApp ahead = FaultApp.start(injector, database.tables, history, pauses,
                FaultApp.Options.node("ahead").withClock(Clock.offset(Clock.systemUTC(), Duration.ofHours(1))))) {
            Pauses.Pause pause = pauses.register("RESERVE:" + key);
            Future<String> owner = threads.submit(() -> app.shop.reserve(key));
            pause.awaitEntered();

                Throwable t = catchThrowable(() -> ahead.shop.reserve(key));
            assertThat(t).as("the claim is live by the database's clock: no takeover; got %s", describe(t))
                    .isInstanceOf(IdempotencyInProgressException.class);
            pause.release();
            String result = owner.get(30, TimeUnit.SECONDS);

            assertThat(ahead.shop.reserve(key)).as("the outcome lives 30m by the database's clock: replayed")
                    .isEqualTo(result);
            assertThat(history.values(key, Type.EFFECT)).containsExactly(result);
        }
    }

    // the storm ----------------------------------------------------------------------------------------------------

    @Test
    void randomizedStormJudgedByTheChecker() {
        Storm.Result result = new Storm(database, injector, app, history, threads).run(16, 50,
                Duration.ofSeconds(20));
        storm = result;
        otherFaults.addAndGet(result.otherFaults());
        HistoryChecker.Verdict v = result.verdict();
        assertThat(v.findings()).as("the checker's findings (seed %d)", result.seed()).isEmpty();
        assertThat(v.duplicatedEffects()).isZero();
        assertThat(v.wrongAnswers()).isZero();
        assertThat(v.stuckKeys()).isZero();
    }
}
