package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Calls that go on while a Redis master is killed: rounds of calls, each answer checked (the key's one run, within
 * a command timeout and some slack), until the servers say the failover is over and the pre-filter answers from
 * Redis again; what the store answered meanwhile is counted.
 */
final class FailoverRun {

    /** The pre-filters' command timeout in the failover suites. */
    static final Duration TIMEOUT = Duration.ofMillis(200);
    /** What one call may cost beyond the command timeout on a loaded two-core machine. */
    static final Duration SLACK = Duration.ofMillis(800);
    /** How long a failover and the pre-filter's recovery may take at most. */
    static final Duration WITHIN = Duration.ofSeconds(30);

    private final long killedAt = System.nanoTime();
    int fromStore;
    long failoverNanos;
    long recoveredNanos;

    private FailoverRun() {
    }

    /** Calls {@code key}: the answer must be its one run's outcome, and the call must cost at most a timeout. */
    static Outcome callAndCheck(Node node, String key) {
        long start = System.nanoTime();
        String result = node.call(key);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("call of %s", key).isLessThan(TIMEOUT.plus(SLACK));
        assertThat(result).as("the answer to %s", key).isEqualTo(key + "#1");
        return node.lastOutcome();
    }

    /**
     * Kills, then calls every key of {@code keys} on {@code reader} and one new key on {@code writer} (added to
     * {@code keys}) per round, until {@code failedOver} has held once and then {@code recovered} holds.
     */
    static FailoverRun run(Node reader, Node writer, List<String> keys, Killer kill, BooleanSupplier failedOver,
            BooleanSupplier recovered) throws Exception {
        kill.kill();
        FailoverRun run = new FailoverRun();
        for (int round = 0; run.recoveredNanos == 0; round++) {
            assertThat(Duration.ofNanos(System.nanoTime() - run.killedAt)).as("recovery after the kill")
                    .isLessThan(WITHIN);
            for (String k : keys) {
                if (callAndCheck(reader, k) == Outcome.REPLAYED) {
                    run.fromStore++;
                }
            }
            String fresh = "N-" + round;
            assertThat(callAndCheck(writer, fresh)).isEqualTo(Outcome.EXECUTED);
            keys.add(fresh);
            if (run.failoverNanos == 0 && failedOver.getAsBoolean()) {
                run.failoverNanos = System.nanoTime() - run.killedAt;
            }
            if (run.failoverNanos > 0 && recovered.getAsBoolean()) {
                run.recoveredNanos = System.nanoTime() - run.killedAt;
            }
            Thread.sleep(50);
        }
        assertThat(run.fromStore).as("calls the store answered while Redis could not").isPositive();
        return run;
    }

    /** The suite's line in its output, which .ci/run prints. */
    String line(String what) {
        return String.format("%s, replica promoted after %.1f s, pre-filter recovered after %.1f s, %d calls answered"
                + " by the store meanwhile, wrong answers 0", what, failoverNanos / 1e9, recoveredNanos / 1e9,
                fromStore);
    }

    /** Kills a server. */
    interface Killer {
        void kill() throws Exception;
    }
}
