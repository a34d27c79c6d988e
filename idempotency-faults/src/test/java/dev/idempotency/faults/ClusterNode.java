package dev.idempotency.faults;

import dev.idempotency.Tier;
import dev.idempotency.web.IdempotentRequest;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * One node of the cluster storm ({@link ClusterStorm}), a child JVM: a Spring Boot order service on an embedded
 * Tomcat, with the idempotency starter on the PostgreSQL pair's multi-host URL, as a user deploys it. Two endpoints
 * under the {@code Idempotency-Key} header:
 * <ul>
 *   <li>{@code POST /orders}, {@link Tier#REVERSIBLE} and {@code @Transactional}: the order row (in the storm's
 *       business table) is the effect; it commits with the claim and the recorded response or not at all;</li>
 *   <li>{@code POST /payouts}, {@link Tier#IRREVERSIBLE}: the payout goes out to a gateway, here a line
 *       {@code effect <key> <attempt>} on standard output, printed (and flushed into the parent's pipe) before the
 *       method returns: a node killed afterwards has paid.</li>
 * </ul>
 * Each answer is the attempt's id ({@code <node>-<n>}), so a caller can tell which execution it got. Prints
 * {@code listening <port>} once it serves; ends when its standard input does (its parent died).
 *
 * <p>Arguments: jdbcUrl idempotencyTable businessTable nodeName [redisClusterNodes]: with the last, the Redis
 * pre-filter ({@code idempotency.redis.*}) on that Redis Cluster, its secret from {@code IDEMPOTENCY_REDIS_SECRET}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ClusterNode {

    static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    @RestController
    static class Orders {
        private final JdbcTemplate jdbc;
        private final String business;
        private final String node;
        private final AtomicLong attempts = new AtomicLong();

        Orders(JdbcTemplate jdbc, org.springframework.core.env.Environment env) {
            this.jdbc = jdbc;
            this.business = env.getRequiredProperty("storm.business-table");
            this.node = env.getRequiredProperty("storm.node");
        }

        private String attempt() {
            return node + "-" + attempts.incrementAndGet();
        }

        @PostMapping("/orders")
        @IdempotentRequest(tier = Tier.REVERSIBLE, lockTimeout = "500ms")
        @Transactional
        public String order(@RequestHeader("Idempotency-Key") String key) {
            String attempt = attempt();
            jdbc.update("INSERT INTO " + business + " (id, kind, ref, val) VALUES (?, 'ORDER', ?, ?)", attempt, key,
                    attempt);
            return attempt;
        }

        @PostMapping("/payouts")
        @IdempotentRequest(tier = Tier.IRREVERSIBLE, lockTimeout = "500ms")
        public String payout(@RequestHeader("Idempotency-Key") String key) {
            String attempt = attempt();
            OUT.println("effect " + key + " " + attempt);
            return attempt;
        }
    }

    public static void main(String[] args) {
        // the parent holds this JVM's standard input open: when it dies (a build killed), so does the node
        Thread orphan = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent
                }
            } catch (java.io.IOException e) {
                // the pipe is gone
            }
            Runtime.getRuntime().halt(3);
        }, "parent-watch");
        orphan.setDaemon(true);
        orphan.start();
        String url = args[0];
        java.util.List<String> redis = args.length > 4
                // the Redis pre-filter on a Redis Cluster; its secret comes from IDEMPOTENCY_REDIS_SECRET
                ? java.util.List.of("idempotency.redis.enabled=true", "idempotency.redis.cluster-nodes=" + args[4])
                : java.util.List.of();
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ClusterNode.class).properties(
                redis.toArray(String[]::new)).properties(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.main.banner-mode=off",
                "spring.jmx.enabled=false",
                "logging.config=classpath:cluster-node-logback.xml",
                "spring.datasource.url=" + url,
                // a failover: a connection that cannot be had within 2 s fails the request (503), the client retries
                "spring.datasource.hikari.maximum-pool-size=8",
                "spring.datasource.hikari.connection-timeout=2000",
                "spring.datasource.hikari.validation-timeout=1000",
                "idempotency.jdbc.table-name=" + args[1],
                "idempotency.jdbc.initialize-schema=never",
                "idempotency.purge.enabled=false",
                "storm.business-table=" + args[2],
                "storm.node=" + args[3]).run();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        OUT.println("listening " + port);
    }
}
