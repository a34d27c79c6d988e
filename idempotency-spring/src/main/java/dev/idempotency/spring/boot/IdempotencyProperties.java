package dev.idempotency.spring.boot;

import dev.idempotency.cache.CaffeinePrefilter;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code idempotency.*} properties of the Spring Boot auto-configuration ({@link IdempotencyAutoConfiguration}).
 * Every one is listed, with its default, in {@code docs/spring-boot.md}.
 */
@ConfigurationProperties("idempotency")
public class IdempotencyProperties {

    /**
     * Whether to auto-configure idempotency at all. When off, nothing is registered and @Idempotent methods
     * run unprotected unless the application sets things up itself (for instance with @EnableIdempotency).
     */
    private boolean enabled = true;

    /**
     * Time to live of a recorded outcome for @Idempotent methods that leave ttl at its default
     * ("24h"); a method that sets another value keeps it.
     */
    private Duration defaultTtl = Duration.ofHours(24);

    /**
     * How long a duplicate waits for an attempt in flight, for @Idempotent methods that leave
     * lockTimeout at its default ("10s"); a method that sets another value keeps it.
     */
    private Duration defaultLockTimeout = Duration.ofSeconds(10);

    /**
     * How many callers of one key may wait at once on this node (one talks to the store, the others wait in
     * memory); the next is refused at once with IdempotencyInProgressException. Keep it below the connection pool's
     * size: inside @Transactional every waiting caller holds a pooled connection.
     */
    private int maxWaitersPerKey = dev.idempotency.IdempotentExecutor.DEFAULT_MAX_WAITERS_PER_KEY;

    private final Jdbc jdbc = new Jdbc();

    private final Prefilter prefilter = new Prefilter();

    private final CircuitBreaker circuitBreaker = new CircuitBreaker();

    private final Purge purge = new Purge();

    private final Redis redis = new Redis();

    private final BacklogGauges backlog = new BacklogGauges();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = positive(defaultTtl, "idempotency.default-ttl");
    }

    public Duration getDefaultLockTimeout() {
        return defaultLockTimeout;
    }

    public void setDefaultLockTimeout(Duration defaultLockTimeout) {
        this.defaultLockTimeout = positive(defaultLockTimeout, "idempotency.default-lock-timeout");
    }

    public int getMaxWaitersPerKey() {
        return maxWaitersPerKey;
    }

    public void setMaxWaitersPerKey(int maxWaitersPerKey) {
        if (maxWaitersPerKey < 1) {
            throw new IllegalArgumentException("idempotency.max-waiters-per-key must be at least 1, was "
                    + maxWaitersPerKey);
        }
        this.maxWaitersPerKey = maxWaitersPerKey;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Prefilter getPrefilter() {
        return prefilter;
    }

    public CircuitBreaker getCircuitBreaker() {
        return circuitBreaker;
    }

    public Purge getPurge() {
        return purge;
    }

    public Redis getRedis() {
        return redis;
    }

    public BacklogGauges getBacklog() {
        return backlog;
    }

    private static Duration positive(Duration value, String property) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(property + " must be a positive duration, was " + value);
        }
        return value;
    }

    /** When to create the JDBC store's table; the semantics of Spring Boot's DatabaseInitializationMode. */
    public enum SchemaInitialization {
        /** Never: the table comes from the application's migrations (Flyway, Liquibase). */
        NEVER,
        /** Only on an embedded, in-memory database (H2, HSQLDB, Derby). */
        EMBEDDED,
        /** On any database, when the table does not exist yet. */
        ALWAYS
    }

    /** The JDBC store on the application's DataSource. */
    public static class Jdbc {

        /**
         * Table of the JDBC store: a plain SQL identifier, optionally qualified by a schema ("schema.table").
         */
        private String tableName = "idempotency_record";

        /**
         * When to create the table, if it does not exist, from the script shipped for the database
         * (dev/idempotency/jdbc/schema-*.sql): "embedded" (in-memory databases only), "always" or "never" (the table
         * comes from your migrations).
         */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        public String getTableName() {
            return tableName;
        }

        public void setTableName(String tableName) {
            this.tableName = tableName;
        }

        public SchemaInitialization getInitializeSchema() {
            return initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }
    }

    /** The Caffeine pre-filter in front of the store. */
    public static class Prefilter {

        /**
         * Whether to answer replays of outcomes committed on this node from memory, without a database access.
         * Needs Caffeine on the class path (idempotency-spring brings it). Unset, it is on whenever Caffeine is
         * there; set to true without Caffeine, startup fails.
         */
        private @Nullable Boolean enabled;

        /** How many outcomes the pre-filter holds at most. */
        private long maximumSize = 10_000;

        /**
         * How many bytes of outcomes the pre-filter holds at most, each weighed by its stored result and key
         * ({@code 64MB}, {@code 512KB}, or a number of bytes); both this and maximum-size hold.
         */
        private DataSize maxBytes = DataSize.ofBytes(CaffeinePrefilter.Builder.DEFAULT_MAXIMUM_BYTES);

        /**
         * The longest an outcome stays in the pre-filter, however long its record lives: how long an operator's
         * eviction of a key on another node may go unseen on this one.
         */
        private Duration maximumAge = Duration.ofMinutes(5);

        public @Nullable Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(@Nullable Boolean enabled) {
            this.enabled = enabled;
        }

        public long getMaximumSize() {
            return maximumSize;
        }

        public void setMaximumSize(long maximumSize) {
            if (maximumSize <= 0) {
                throw new IllegalArgumentException("idempotency.prefilter.maximum-size must be positive, was "
                        + maximumSize);
            }
            this.maximumSize = maximumSize;
        }

        public DataSize getMaxBytes() {
            return maxBytes;
        }

        public void setMaxBytes(DataSize maxBytes) {
            if (maxBytes == null || maxBytes.toBytes() <= 0) {
                throw new IllegalArgumentException("idempotency.prefilter.max-bytes must be positive, was "
                        + maxBytes);
            }
            this.maxBytes = maxBytes;
        }

        public Duration getMaximumAge() {
            return maximumAge;
        }

        public void setMaximumAge(Duration maximumAge) {
            this.maximumAge = positive(maximumAge, "idempotency.prefilter.maximum-age");
        }
    }

    /** The circuit breaker around the store (under the pre-filter): see docs/stores.md, "When the store is down". */
    public static class CircuitBreaker {

        /**
         * Whether a store that keeps failing is given up on for a while, so that calls fail fast (or run unguarded
         * where declared) instead of each waiting for a connection or lock timeout.
         */
        private boolean enabled = true;

        /** Consecutive store failures that open the circuit. */
        private int failureThreshold = dev.idempotency.store.CircuitBreakerStore.DEFAULT_FAILURE_THRESHOLD;

        /** How long an open circuit fails calls fast before one trial call goes to the store. */
        private Duration openFor = dev.idempotency.store.CircuitBreakerStore.DEFAULT_OPEN_FOR;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getFailureThreshold() {
            return failureThreshold;
        }

        public void setFailureThreshold(int failureThreshold) {
            if (failureThreshold < 1) {
                throw new IllegalArgumentException("idempotency.circuit-breaker.failure-threshold must be at least 1,"
                        + " was " + failureThreshold);
            }
            this.failureThreshold = failureThreshold;
        }

        public Duration getOpenFor() {
            return openFor;
        }

        public void setOpenFor(Duration openFor) {
            this.openFor = positive(openFor, "idempotency.circuit-breaker.open-for");
        }
    }

    /** The scheduled deletion of expired outcomes. */
    public static class Purge {

        /** Whether to delete expired outcomes on a schedule. Safe on many nodes at once. */
        private boolean enabled = true;

        /**
         * Time between the end of one purge and the start of the next. The first runs one minute after startup, or
         * one interval after it if that is shorter.
         */
        private Duration interval = Duration.ofHours(1);

        /** Rows deleted per statement; a purge repeats statements until a batch comes back short. */
        private int batchSize = 500;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = positive(interval, "idempotency.purge.interval");
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            if (batchSize <= 0) {
                throw new IllegalArgumentException("idempotency.purge.batch-size must be positive, was " + batchSize);
            }
            this.batchSize = batchSize;
        }
    }

    /**
     * The Redis pre-filter shared by every node (idempotency-redis and Lettuce on the class path): see docs/redis.md.
     */
    public static class Redis {

        /**
         * Whether committed outcomes are shared by every node on Redis, between the circuit breaker and the local
         * pre-filter. Needs idempotency-redis (and Lettuce) on the class path.
         */
        private boolean enabled;

        /**
         * Where Redis is, as a Lettuce URI: one Redis (redis://host:6379/0, rediss:// for TLS), or the master a
         * Sentinel names (redis-sentinel://sentinel1:26379,sentinel2:26379/0#mymaster). Unset: spring.data.redis.url,
         * else redis://localhost:6379. Not used when cluster-nodes is set.
         */
        private @Nullable String url;

        /**
         * A Redis Cluster, by some of its nodes, one URI each (redis://10.0.0.1:6379,redis://10.0.0.2:6379): the
         * pre-filter learns the topology from them and follows failovers. Set, it takes the place of url.
         */
        private java.util.List<String> clusterNodes = new java.util.ArrayList<>();

        /** What every Redis key of the pre-filter starts with: one prefix per store sharing a Redis. */
        private String keyPrefix = "idempotency:";

        /** The most a Redis command may cost a call; past it the store decides. */
        private Duration commandTimeout = Duration.ofMillis(50);

        /** How long Redis is left alone after a failure: calls meanwhile go to the store only. */
        private Duration retryAfter = Duration.ofSeconds(1);

        /**
         * The secret every node shares (required when enabled): outcomes in Redis carry an HMAC-SHA256 keyed with it,
         * and a value that does not verify is a miss. At least 32 bytes, random (openssl rand -base64 32); give it
         * as the environment variable IDEMPOTENCY_REDIS_SECRET or from a secret store, never in a committed file.
         */
        private @Nullable String secret;

        /**
         * Secrets a value may also be signed with: verified, never used to sign. During a rotation, the next secret
         * (before any node signs with it), then the previous one: see docs/redis.md.
         */
        private java.util.List<String> acceptedSecrets = new java.util.ArrayList<>();

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable String getUrl() {
            return url;
        }

        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        public java.util.List<String> getClusterNodes() {
            return clusterNodes;
        }

        public void setClusterNodes(java.util.List<String> clusterNodes) {
            this.clusterNodes = clusterNodes;
        }

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public Duration getCommandTimeout() {
            return commandTimeout;
        }

        public void setCommandTimeout(Duration commandTimeout) {
            this.commandTimeout = positive(commandTimeout, "idempotency.redis.command-timeout");
        }

        public Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = positive(retryAfter, "idempotency.redis.retry-after");
        }

        public @Nullable String getSecret() {
            return secret;
        }

        public void setSecret(@Nullable String secret) {
            this.secret = secret;
        }

        public java.util.List<String> getAcceptedSecrets() {
            return acceptedSecrets;
        }

        public void setAcceptedSecrets(java.util.List<String> acceptedSecrets) {
            this.acceptedSecrets = acceptedSecrets;
        }
    }

    /** The gauges of what waits for an operator (with Micrometer): see docs/metrics.md. */
    public static class BacklogGauges {

        /**
         * Whether the NEEDS_REVIEW backlog and the claims stuck past their lease are gauged per operation (one
         * indexed query of the store every interval, never one per scrape).
         */
        private boolean enabled = true;

        /** Time between two refreshes of the backlog gauges; the first runs at startup. */
        private Duration interval = Duration.ofMinutes(1);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = positive(interval, "idempotency.backlog.interval");
        }
    }
}
