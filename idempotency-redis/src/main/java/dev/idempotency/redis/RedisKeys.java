package dev.idempotency.redis;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The Redis keys of one prefix, and the scripts that write them. A key hash's outcome is {@code <prefix>{<hex>}}
 * and its eviction marker {@code <prefix>evicted:{<hex>}}: the prefix has no braces, so the hash tag of both is the
 * hex of the key hash, and a script given both (every script here names one key hash only) runs on one Redis Cluster
 * node, in one slot.
 */
final class RedisKeys {

    private static final HexFormat HEX = HexFormat.of();

    /** Writes KEYS[1] = ARGV[1] for ARGV[3] ms unless KEYS[2] marks that very outcome (ARGV[2]) as evicted. */
    static final String FILL = """
            local evicted = redis.call('GET', KEYS[2])
            if evicted and evicted == ARGV[2] then return 0 end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
            return 1
            """;
    /** Deletes KEYS[1] if it still holds ARGV[1]: a rejected value, never a genuine one written since. */
    static final String DELETE_IF = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
            return 0
            """;
    /** Marks the outcome ARGV[1] of KEYS[1] evicted (KEYS[2], for ARGV[2] ms) and deletes it. */
    static final String EVICT = """
            redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
            redis.call('DEL', KEYS[1])
            return 1
            """;

    private final byte[] prefix;

    RedisKeys(String prefix) {
        this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code <prefix>{<hex>}}: where the outcome of {@code keyHash} is held. */
    byte[] outcome(byte[] keyHash) {
        return concat(prefix, ("{" + HEX.formatHex(keyHash) + "}").getBytes(StandardCharsets.US_ASCII));
    }

    /** {@code <prefix>evicted:{<hex>}}: the marker of an evicted outcome, in the same slot as the outcome. */
    byte[] marker(byte[] keyHash) {
        return concat(prefix, ("evicted:{" + HEX.formatHex(keyHash) + "}").getBytes(StandardCharsets.US_ASCII));
    }

    /** The outcome's key and its marker, as a script's KEYS. */
    byte[][] outcomeAndMarker(byte[] keyHash) {
        return new byte[][] {outcome(keyHash), marker(keyHash)};
    }

    static byte[] ascii(long n) {
        return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
