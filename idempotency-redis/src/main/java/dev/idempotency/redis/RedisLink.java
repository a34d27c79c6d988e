package dev.idempotency.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.api.sync.RedisStringCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The pre-filter's way to Redis: one Redis (a {@code redis://} URI), the master a Sentinel names (a
 * {@code redis-sentinel://} URI) or a Redis Cluster (its seed nodes), one connection opened on first use, and the
 * rule that a failure leaves Redis alone for {@code retryAfter}: meanwhile {@link #commands} answers null and the
 * store decides. Every command of the pre-filter names one key, or keys of one hash tag, so each goes to one node
 * of a cluster.
 */
final class RedisLink implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RedisPrefilter.class.getName());
    /** The longest a lost connection waits between two attempts to reconnect (Lettuce's own default is 30 s). */
    static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    /** At most one refresh of a cluster's topology, triggered by a redirection or a lost node, in this long. */
    static final Duration TOPOLOGY_REFRESH_AT_MOST_EVERY = Duration.ofSeconds(1);
    /** A cluster's topology is refreshed this often in any case. */
    static final Duration TOPOLOGY_REFRESH_EVERY = Duration.ofSeconds(30);

    /** The commands the pre-filter sends, the same on one Redis and on a cluster. */
    record Commands(RedisStringCommands<byte[], byte[]> strings, RedisScriptingCommands<byte[], byte[]> scripts,
            RedisScriptingAsyncCommands<byte[], byte[]> asyncScripts, RedisKeyAsyncCommands<byte[], byte[]> asyncKeys) {
    }

    private final @Nullable RedisClient client;
    private final @Nullable RedisClusterClient clusterClient;
    private final @Nullable ClientResources ownedResources;
    private final boolean ownsClient;
    private final Duration commandTimeout;
    private final long retryAfterNanos;
    private final String name;
    private final LongSupplier nanoTime = System::nanoTime;

    private final Object connecting = new Object();
    private volatile @Nullable StatefulConnection<byte[], byte[]> connection;
    private volatile @Nullable Commands commands;
    private volatile long quietUntil;
    private volatile boolean quiet;
    private final AtomicBoolean down = new AtomicBoolean();
    private volatile boolean closed;
    private final LongAdder failures = new LongAdder();

    private RedisLink(@Nullable RedisClient client, @Nullable RedisClusterClient clusterClient,
            @Nullable ClientResources ownedResources, boolean ownsClient, Duration commandTimeout, Duration retryAfter,
            String name) {
        this.client = client;
        this.clusterClient = clusterClient;
        this.ownedResources = ownedResources;
        this.ownsClient = ownsClient;
        this.commandTimeout = commandTimeout;
        this.retryAfterNanos = retryAfter.toNanos();
        this.name = name;
    }

    /** On the application's client (not closed here). */
    static RedisLink of(RedisClient client, Duration commandTimeout, Duration retryAfter, String name) {
        return new RedisLink(client, null, null, false, commandTimeout, retryAfter, name);
    }

    /** On the application's cluster client (not closed here). */
    static RedisLink of(RedisClusterClient client, Duration commandTimeout, Duration retryAfter, String name) {
        return new RedisLink(null, client, null, false, commandTimeout, retryAfter, name);
    }

    /** A client of its own for one Redis, or the master a Sentinel names. */
    static RedisLink single(String uri, Duration commandTimeout, Duration retryAfter, String name) {
        ClientResources resources = resources();
        RedisURI redisUri = RedisURI.create(uri);
        redisUri.setTimeout(commandTimeout);
        for (RedisURI sentinel : redisUri.getSentinels()) {
            sentinel.setTimeout(commandTimeout);
        }
        RedisClient made = RedisClient.create(resources, redisUri);
        made.setOptions(options(ClientOptions.builder(), commandTimeout).build());
        return new RedisLink(made, null, resources, true, commandTimeout, retryAfter, name);
    }

    /** A cluster client of its own, on the cluster's seed nodes, that follows failovers. */
    static RedisLink cluster(List<String> seeds, Duration commandTimeout, Duration retryAfter, String name) {
        ClientResources resources = resources();
        // the URI's timeout bounds the handshake of each node's connection and the topology queries, not the
        // pre-filter's commands (TimeoutOptions): a cluster is learnt from several nodes, give them a little more
        List<RedisURI> uris = seeds.stream().map(s -> {
            RedisURI u = RedisURI.create(s);
            u.setTimeout(connectTimeout(commandTimeout));
            return u;
        }).toList();
        RedisClusterClient made = RedisClusterClient.create(resources, uris);
        made.setOptions(options(ClusterClientOptions.builder(), commandTimeout)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(TOPOLOGY_REFRESH_AT_MOST_EVERY)
                        .enablePeriodicRefresh(TOPOLOGY_REFRESH_EVERY)
                        .build())
                .build());
        return new RedisLink(null, made, resources, true, commandTimeout, retryAfter, name);
    }

    private static ClientResources resources() {
        return ClientResources.builder().reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY,
                2, TimeUnit.MILLISECONDS)).build();
    }

    private static <B extends ClientOptions.Builder> B options(B builder, Duration commandTimeout) {
        builder.autoReconnect(true)
                // a command sent while the connection is down fails at once instead of waiting in a queue
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout(commandTimeout)).build())
                .timeoutOptions(TimeoutOptions.enabled(commandTimeout));
        return builder;
    }

    /** Connecting may take a little longer than a command, never much: a few command timeouts, at most a second. */
    private static Duration connectTimeout(Duration commandTimeout) {
        Duration three = commandTimeout.multipliedBy(3);
        return three.compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1) : three;
    }

    /** Whether this is a Redis Cluster. */
    boolean isCluster() {
        return clusterClient != null;
    }

    /** Redis commands that failed or timed out. */
    long failures() {
        return failures.sum();
    }

    /** The commands, or null while Redis is left alone after a failure (or cannot be connected to). */
    @Nullable Commands commands() {
        if (quiet && nanoTime.getAsLong() - quietUntil < 0) {
            return null;
        }
        Commands c = commands;
        if (c != null) {
            return c;
        }
        synchronized (connecting) {
            c = commands;
            if (c == null && !closed) {
                try {
                    c = open();
                    commands = c;
                } catch (RuntimeException e) {
                    failed("connect", e);
                    return null;
                }
            }
            return c;
        }
    }

    private Commands open() {
        if (clusterClient != null) {
            StatefulRedisClusterConnection<byte[], byte[]> c = clusterClient.connect(ByteArrayCodec.INSTANCE);
            c.setTimeout(commandTimeout);
            connection = c;
            return new Commands(c.sync(), c.sync(), c.async(), c.async());
        }
        StatefulRedisConnection<byte[], byte[]> c = Objects.requireNonNull(client).connect(ByteArrayCodec.INSTANCE);
        c.setTimeout(commandTimeout);
        connection = c;
        return new Commands(c.sync(), c.sync(), c.async(), c.async());
    }

    /**
     * Runs {@code script} on the master that holds {@code keys} (one slot), on a connection of its own, and then
     * waits (at most half the command timeout) until one of the master's replicas, if it has any, has it too: Redis
     * replicates asynchronously, and a write that a failover could lose must not count as done. A failover promotes the
     * replica furthest ahead, so one confirmation is enough. The connection is opened and closed here, so that the
     * wait never holds up the calls' commands on the shared one.
     *
     * @throws IllegalStateException if no replica confirmed the write in time (the master has it; retry)
     * @throws RuntimeException as Lettuce throws it, if Redis cannot be reached or the script fails
     */
    void writeEverywhere(String script, byte[][] keys, byte[]... args) {
        StatefulConnection<byte[], byte[]> own = null;
        try {
            StatefulRedisConnection<byte[], byte[]> master;
            if (clusterClient != null) {
                StatefulRedisClusterConnection<byte[], byte[]> cluster = clusterClient.connect(ByteArrayCodec.INSTANCE);
                own = cluster;
                RedisClusterNode node = cluster.getPartitions().getMasterBySlot(SlotHash.getSlot(keys[0]));
                if (node == null) {
                    throw new IllegalStateException("no master serves the slot of " + new String(keys[0],
                            java.nio.charset.StandardCharsets.UTF_8));
                }
                master = cluster.getConnection(node.getUri().getHost(), node.getUri().getPort());
            } else {
                master = Objects.requireNonNull(client).connect(ByteArrayCodec.INSTANCE);
                own = master;
            }
            master.setTimeout(commandTimeout);
            RedisCommands<byte[], byte[]> sync = master.sync();
            sync.eval(script, ScriptOutputType.INTEGER, keys, args);
            List<Object> role = sync.role();
            int replicas = role.size() > 2 && role.get(2) instanceof List<?> list ? list.size() : 0;
            // half the command timeout: Redis may end a WAIT up to a tick (100 ms at hz 10) late, and the client's
            // own timeout then answers instead (a failure either way)
            long waitMillis = Math.max(1, commandTimeout.toMillis() / 2);
            if (replicas > 0 && sync.waitForReplication(1, waitMillis) < 1) {
                throw new IllegalStateException("none of the " + replicas + " replicas of the Redis master confirmed"
                        + " the write within " + waitMillis + " ms, so a failover could undo it");
            }
        } finally {
            if (own != null) {
                own.close();
            }
        }
    }

    /** A command answered: Redis is used again, and its recovery is logged once. */
    void succeeded() {
        quiet = false;
        if (down.compareAndSet(true, false)) {
            LOG.log(System.Logger.Level.INFO, "Redis pre-filter (" + name + ") is reachable again");
        }
    }

    /** A command failed: counted, Redis is left alone for {@code retryAfter}, and the outage is logged once. */
    void failed(String what, Throwable e) {
        if (closed) {
            return; // a write still in flight when the pre-filter was closed
        }
        failures.increment();
        quietUntil = nanoTime.getAsLong() + retryAfterNanos;
        quiet = true;
        if (down.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "Redis pre-filter (" + name + ") failed (" + what + ": " + e
                    + "); the store decides every call until Redis is back (asked again every "
                    + Duration.ofNanos(retryAfterNanos).toMillis() + " ms)");
        }
    }

    /** Closes the connection, and the client if this link made it. */
    @Override
    public void close() {
        synchronized (connecting) {
            closed = true;
            StatefulConnection<byte[], byte[]> c = connection;
            connection = null;
            commands = null;
            if (c != null) {
                c.close();
            }
        }
        if (ownsClient) {
            AbstractRedisClient made = client != null ? client : Objects.requireNonNull(clusterClient);
            if (clusterClient != null) {
                // a topology refresh still under way would open connections on the event loops shut down below
                clusterClient.suspendTopologyRefresh();
                long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                while (clusterClient.isTopologyRefreshInProgress() && System.nanoTime() - end < 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
                }
            }
            made.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            try {
                Objects.requireNonNull(ownedResources).shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                LOG.log(System.Logger.Level.DEBUG, "Redis pre-filter (" + name + "): closing: " + e);
            }
        }
    }
}
