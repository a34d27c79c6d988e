package dev.idempotency.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The generator is open loop: requests go out at their own times whatever happened to the ones before, and a stall
 * is charged to every request that was due during it, from its intended start.
 */
class OpenLoopTest {

    private static final Duration GIVE_UP = Duration.ofSeconds(30);

    @Test
    void requestsGoOutOnScheduleWhileAnEarlierOneIsStalled() {
        // request 0 is held until request 50 has been sent: a closed loop (send, wait, send) would never send it
        CountDownLatch fiftiethSent = new CountDownLatch(1);
        AtomicBoolean released = new AtomicBoolean();
        Set<Long> called = ConcurrentHashMap.newKeySet();
        OpenLoop.Result result = new OpenLoop(8, GIVE_UP).run(sequence -> {
            called.add(sequence);
            if (sequence == 50) {
                fiftiethSent.countDown();
            } else if (sequence == 0) {
                released.set(fiftiethSent.await(20, TimeUnit.SECONDS));
            }
        }, 100, Duration.ZERO, Duration.ofSeconds(1));

        assertThat(released).as("request 50 was sent while request 0 waited for its answer").isTrue();
        assertThat(called).hasSize(100);
        assertThat(result.recorded()).isEqualTo(100);
        assertThat(result.latencies().getTotalCount()).isEqualTo(100);
        assertThat(result.failures()).isZero();
    }

    @Test
    void aStallIsChargedToEveryRequestDueDuringItFromItsIntendedStart() {
        // one worker: what was due while request 0 stalled waits for it, as behind a client's stalled connection
        OpenLoop.Result result = new OpenLoop(1, GIVE_UP).run(sequence -> {
            if (sequence == 0) {
                Thread.sleep(500);
            }
        }, 100, Duration.ZERO, Duration.ofSeconds(1));

        // request i is due at 10 i ms and answered after request 0's 500 ms: i = 0..25 waited at least 250 ms
        assertThat(result.latencies().getCountBetweenValues(250_000, OpenLoop.HIGHEST_MICROS))
                .as("requests charged with at least 250 ms").isGreaterThanOrEqualTo(26);
        assertThat(result.latencies().getMaxValue()).isGreaterThanOrEqualTo(500_000);
        // a closed loop would have recorded one slow answer among 100: above its 99th percentile, not its 80th
        assertThat(result.millis(80)).as("p80").isGreaterThanOrEqualTo(250);
        assertThat(result.recorded()).isEqualTo(100);
    }

    @Test
    void theHeadIsSentButNotRecorded() {
        Set<Long> called = ConcurrentHashMap.newKeySet();
        OpenLoop.Result result = new OpenLoop(4, GIVE_UP).run(called::add, 200, Duration.ofMillis(250),
                Duration.ofMillis(250));

        assertThat(called).hasSize(100);
        assertThat(result.recorded()).isEqualTo(50);
        assertThat(result.latencies().getTotalCount()).isEqualTo(50);
    }

    @Test
    void failuresAreCountedWithTheirLatencyAndKind() {
        OpenLoop.Result result = new OpenLoop(4, GIVE_UP).run(sequence -> {
            if (sequence % 2 == 1) {
                throw new IllegalStateException("HTTP 409");
            }
        }, 200, Duration.ZERO, Duration.ofMillis(500));

        assertThat(result.failures()).isEqualTo(50);
        assertThat(result.latencies().getTotalCount()).isEqualTo(100);
        assertThat(result.failureKinds()).containsExactly(java.util.Map.entry("IllegalStateException: HTTP 409", 50L));
    }

    @Test
    void theRepeatsAreRecordedApartAsWell() {
        OpenLoop.Result result = new OpenLoop(16, GIVE_UP).run(sequence -> {
            if (sequence % 2 == 1) {
                Thread.sleep(200);
            }
        }, 100, Duration.ZERO, Duration.ofMillis(500), sequence -> sequence % 2 == 1);

        assertThat(result.latencies().getTotalCount()).isEqualTo(50);
        assertThat(result.repeats().getTotalCount()).isEqualTo(25);
        assertThat(result.firsts().getTotalCount()).isEqualTo(25);
        assertThat(result.repeats().getMinValue()).isGreaterThanOrEqualTo(200_000);
        assertThat(result.firsts().getValueAtPercentile(50)).isLessThan(result.repeats().getMinValue());
    }

    @Test
    void aRequestThatWaitedPastTheGiveUpTimeIsNotSentAndCountsAsFailed() {
        Set<Long> called = ConcurrentHashMap.newKeySet();
        OpenLoop.Result result = new OpenLoop(1, Duration.ofMillis(100)).run(sequence -> {
            called.add(sequence);
            if (sequence == 0) {
                Thread.sleep(400);
            }
        }, 100, Duration.ZERO, Duration.ofMillis(200));

        // due at 0..190 ms, the worker free at 400 ms: every request but the first waited past 100 ms
        assertThat(called).containsExactly(0L);
        assertThat(result.notSent()).isEqualTo(19);
        assertThat(result.failures()).isEqualTo(19);
        assertThat(result.latencies().getTotalCount()).isEqualTo(20);
    }
}
