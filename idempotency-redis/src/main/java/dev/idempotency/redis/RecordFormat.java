package dev.idempotency.redis;

import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyRecord;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A completed record as one Redis value: a small JSON object written with Jackson 3 (the library's JSON), never Java
 * serialization. The result is the stored bytes the {@code ResultCodec} wrote, in base64, exactly as the store holds
 * them; nothing in the value names a class. A value that cannot be read back, or that belongs to another key, is a
 * miss (the store decides), never a replay.
 */
final class RecordFormat {

    /** The format of the values; a value of another format is a miss. */
    static final int FORMAT = 1;

    private static final JsonMapper MAPPER = JsonMapper.builder().build();
    private static final HexFormat HEX = HexFormat.of();

    private RecordFormat() {
    }

    static byte[] encode(IdempotencyRecord record) {
        if (record.status() != IdempotencyRecord.Status.COMPLETED || record.result() == null) {
            throw new IllegalArgumentException("only completed records with a result go to Redis: " + record);
        }
        ObjectNode o = MAPPER.createObjectNode();
        o.put("format", FORMAT);
        o.put("keyHash", HEX.formatHex(record.keyHash()));
        o.put("operation", record.operation());
        o.put("key", record.key());
        o.put("fingerprint", Base64.getEncoder().encodeToString(record.fingerprint()));
        o.put("tier", record.tier().name());
        o.put("createdAt", record.createdAt().toEpochMilli());
        o.put("expiresAt", record.expiresAt().toEpochMilli());
        o.put("result", Base64.getEncoder().encodeToString(record.result()));
        return MAPPER.writeValueAsBytes(o);
    }

    /**
     * The record a value holds, or null when it is not a completed record of {@code keyHash} in this format.
     *
     * @throws RuntimeException when the value is not JSON at all (the caller treats it as a miss)
     */
    static @Nullable IdempotencyRecord decode(byte[] keyHash, byte[] value) {
        JsonNode o = MAPPER.readTree(value);
        JsonNode format = o.get("format");
        if (format == null || !format.isInt() || format.intValue() != FORMAT) {
            return null;
        }
        byte[] storedHash = HEX.parseHex(text(o, "keyHash"));
        if (!Arrays.equals(storedHash, keyHash)) {
            return null;
        }
        return new IdempotencyRecord(keyHash, text(o, "operation"), text(o, "key"),
                Base64.getDecoder().decode(text(o, "fingerprint")), Tier.valueOf(text(o, "tier")),
                IdempotencyRecord.Status.COMPLETED, Base64.getDecoder().decode(text(o, "result")), null,
                Instant.ofEpochMilli(number(o, "createdAt")), Instant.ofEpochMilli(number(o, "expiresAt")));
    }

    /**
     * What tells one completed outcome of a key from a later one of the same key: its creation and expiry. An
     * eviction leaves it behind, so that a copy of the evicted outcome read before the eviction is not written back.
     */
    static byte[] identity(IdempotencyRecord record) {
        return (record.createdAt().toEpochMilli() + ":" + record.expiresAt().toEpochMilli())
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        if (v == null || !v.isString()) {
            throw new IllegalArgumentException("no text field " + field);
        }
        return v.stringValue();
    }

    private static long number(JsonNode o, String field) {
        JsonNode v = o.get(field);
        if (v == null || !v.canConvertToLong()) {
            throw new IllegalArgumentException("no number field " + field);
        }
        return v.longValue();
    }
}
