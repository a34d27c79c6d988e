package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * What an asynchronous standby loses, measured (issue 36, docs/scaling.md): the cluster storm of
 * {@link ClusterStormIT} with an asynchronous standby, the primary killed ({@code pg_ctl stop -m immediate}: the
 * server quits at once, the WAL its standby has not received is gone) and the standby promoted. A measurement, not a
 * gate: its name matches no pattern of the build's Surefire includes, so it runs only when asked for by name:
 *
 * <pre>
 * mvn -B -o -pl idempotency-faults -am verify -Dtest=AsyncFailoverMeasurement -Dsurefire.failIfNoSpecifiedTests=false
 *     -Dcluster.runs=3 -Dcluster.lag-ms=0
 * </pre>
 *
 * {@code cluster.lag-ms} puts a {@link LaggingLink} between the standby and the primary: the primary's WAL reaches
 * the standby that much later, and what is on the way when the primary dies is lost (on this machine the standby is
 * otherwise a fraction of a millisecond behind).
 *
 * It prints one line a run, {@code async failover: ...}, with the checker's counts (a claim acknowledged then lost is a
 * second execution: a duplicated effect; a completion acknowledged then lost is an answer whose effect the new
 * primary does not hold: a wrong answer), and the findings. It fails only when the storm itself could not run.
 */
class AsyncFailoverMeasurement {

    @Test
    void theStormWithAnAsynchronousStandbyPromotedAfterTheCrashOfThePrimary() throws Exception {
        int runs = Integer.getInteger("cluster.runs", 3);
        Duration lag = Duration.ofMillis(Long.getLong("cluster.lag-ms", 0));
        for (int i = 1; i <= runs; i++) {
            try (PostgresPair pair = PostgresPair.start(false, lag);
                    ClusterStorm storm = new ClusterStorm(pair, null, 3)) {
                ClusterStorm.Result r = storm.run(Duration.ofSeconds(40), 12, true);
                System.out.println(r.line("async failover " + i + "/" + runs + ", lag " + lag.toMillis() + " ms")
                        + "; " + r.verdict().keys() + " keys, "
                        + r.httpRequests() + " HTTP requests (retried after " + r.retried() + "), seed " + r.seed()
                        + ", took " + r.took().toSeconds() + " s");
                System.out.println("  lost: " + r.losses());
                System.out.println(ClusterStorm.findings(r.verdict(), 30));
                assertThat(r.failovers()).isEqualTo(1);
            }
        }
    }
}
