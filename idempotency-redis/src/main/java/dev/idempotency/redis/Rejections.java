package dev.idempotency.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The values found in Redis that are not authentic outcomes of their key: counted, and told in a warning at most
 * once a minute (with the count since the last); values of the unauthenticated format 1 of older versions in one
 * info line, not counted.
 */
final class Rejections {

    private static final System.Logger LOG = System.getLogger(RedisPrefilter.class.getName());
    /** At most one warning of rejected values in this long. */
    private static final long WARN_EVERY_NANOS = Duration.ofMinutes(1).toNanos();

    private final String prefix;
    private final LongAdder rejected = new LongAdder();
    /** Rejected values not yet named in a warning, and when the next warning may be logged. */
    private final LongAdder unwarned = new LongAdder();
    private final AtomicLong nextWarning = new AtomicLong(System.nanoTime());
    private final AtomicBoolean olderFormatSeen = new AtomicBoolean();

    Rejections(String prefix) {
        this.prefix = prefix;
    }

    long count() {
        return rejected.sum();
    }

    void rejected(byte[] redisKey, RecordFormat.Rejected why) {
        String name = new String(redisKey, StandardCharsets.UTF_8);
        if (why.olderFormat()) {
            if (olderFormatSeen.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.INFO, "Redis pre-filter (prefix " + prefix + "): values of format 1,"
                        + " which older versions wrote without a MAC, are misses and are deleted as they are read"
                        + " (first: " + name + "); the store decides those calls");
            }
            return;
        }
        rejected.increment();
        unwarned.increment();
        long now = System.nanoTime();
        long next = nextWarning.get();
        if (now - next >= 0 && nextWarning.compareAndSet(next, now + WARN_EVERY_NANOS)) {
            long count = unwarned.sumThenReset();
            LOG.log(System.Logger.Level.WARNING, "Redis pre-filter (prefix " + prefix + "): the value of Redis key "
                    + name + " is not an outcome this pre-filter's nodes wrote for it: " + why.getMessage()
                    + "; ignored and deleted, the store decides" + (count > 1 ? " (" + count
                    + " such values since the last warning)" : "") + ". Either something without the secret writes to"
                    + " Redis, or the nodes do not share one secret");
        }
    }
}
