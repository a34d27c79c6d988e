package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The cluster storm (issue 36) with a synchronous standby: three {@link ClusterNode} JVMs over HTTP on a PostgreSQL
 * primary and standby made by the test on ports 5433 and 5434 ({@link PostgresPair}), two nodes killed with SIGKILL
 * and started again, the primary stopped and the standby promoted mid-storm; the nodes' Redis pre-filter on a Redis
 * Cluster of six {@code redis-server} processes the test starts on ports 7100-7105 ({@link RedisClusterServers}), one
 * master killed with SIGKILL mid-storm (its replica takes over). Prints the line {@code .ci/run} greps:
 * {@code cluster: <N> nodes, <K> kills, <F> failovers, <R> requests, duplicated effects 0, wrong answers 0, stuck
 * keys 0}, and fails on any finding. Runs when {@code IDEMPOTENCY_POSTGRES_URL} is set (the PostgreSQL suites'
 * switch); then it fails, never skips, when it cannot make its clusters (the PostgreSQL binaries, redis-server).
 */
@EnabledIfEnvironmentVariable(named = FaultDatabase.POSTGRES_URL, matches = ".+")
class ClusterStormIT {

    @Test
    void nodesKilledAndThePrimaryFailedOverToASynchronousStandbyLoseNothing() throws Exception {
        try (PostgresPair pair = PostgresPair.start(true); RedisClusterServers redis = RedisClusterServers.start();
                ClusterStorm storm = new ClusterStorm(pair, redis, 3)) {
            ClusterStorm.Result r = storm.run(Duration.ofSeconds(40), 12, false);
            System.out.println(r.line("cluster"));
            long redisKeys = redis.keys();
            // not the summary line's form ("cluster: ..."), which .ci/run greps
            System.out.println("cluster storm: seed " + r.seed() + ", " + r.httpRequests()
                    + " HTTP requests (retried after " + r.retried() + "), " + r.verdict().keys() + " keys, "
                    + redisKeys + " keys in the Redis Cluster, took " + r.took().toSeconds() + " s");
            assertThat(redisKeys).as("the nodes' pre-filter shared outcomes on the Redis Cluster").isPositive();
            assertThat(r.failovers()).as("the primary failed over, and a Redis master").isEqualTo(2);
            assertThat(r.kills()).as("nodes killed and started again").isEqualTo(2);
            assertThat(r.verdict().valid()).as("the checker's findings (seed %d):%n%s%nthe nodes' last lines:%n%s",
                    r.seed(), ClusterStorm.findings(r.verdict(), 40), storm.transcripts()).isTrue();
        }
    }
}
