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
 *     -Dcluster.runs=3
 * </pre>
 *
 * It prints one line a run, {@code async failover: ...}, with the checker's counts (a claim acknowledged then lost is a
 * second execution: a duplicated effect; a completion acknowledged then lost is an answer whose effect the new
 * primary does not hold: a wrong answer), and the findings. It fails only when the storm itself could not run.
 */
class AsyncFailoverMeasurement {

    @Test
    void theStormWithAnAsynchronousStandbyPromotedAfterTheCrashOfThePrimary() throws Exception {
        int runs = Integer.getInteger("cluster.runs", 3);
        for (int i = 1; i <= runs; i++) {
            try (PostgresPair pair = PostgresPair.start(false); ClusterStorm storm = new ClusterStorm(pair, 3)) {
                ClusterStorm.Result r = storm.run(Duration.ofSeconds(40), 12, true);
                System.out.println(r.line("async failover " + i + "/" + runs) + "; " + r.verdict().keys() + " keys, "
                        + r.httpRequests() + " HTTP requests (retried after " + r.retried() + "), seed " + r.seed()
                        + ", took " + r.took().toSeconds() + " s");
                System.out.println(ClusterStorm.findings(r.verdict(), 30));
                assertThat(r.failovers()).isEqualTo(1);
            }
        }
    }
}
