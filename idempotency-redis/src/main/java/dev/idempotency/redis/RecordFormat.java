package dev.idempotency.redis;

import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyRecord;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A completed record as one authenticated Redis value: {@code 2.<MAC>.<JSON>}. The JSON is a small object written
 * with Jackson 3 (the library's JSON), never Java serialization; its result is the stored bytes the
 * {@code ResultCodec} wrote, in base64, exactly as the store holds them, and nothing in it names a class. The MAC is
 * HMAC-SHA256, keyed with the secret the nodes share, over the format, the Redis key the value is stored under and
 * the JSON's very bytes (base64url, unpadded): a value changed in any byte, or moved to another key or prefix, does
 * not verify. It is checked before the JSON is parsed, with the current secret and then each accepted one.
 *
 * <p>A value that does not verify, is not in this format, or does not read back as a completed record of its key is
 * {@link Rejected}: a miss (the store decides), never a replay.
 */
final class RecordFormat {

    /** The format of the values; a value of another format is a miss. Format 1 (until 0.1) carried no MAC. */
    static final int FORMAT = 2;

    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] HEADER = (FORMAT + ".").getBytes(StandardCharsets.US_ASCII);
    /** What the MAC covers first: which data this is, so that a MAC made for anything else never verifies here. */
    private static final byte[] DOMAIN = ("dev.idempotency.redis.RecordFormat/" + FORMAT + "\0")
            .getBytes(StandardCharsets.US_ASCII);
    /** The MAC's 32 bytes in unpadded base64url. */
    private static final int MAC_CHARS = 43;
    private static final JsonMapper MAPPER = JsonMapper.builder().build();
    private static final HexFormat HEX = HexFormat.of();
    private static final Base64.Encoder MAC_ENCODER = Base64.getUrlEncoder().withoutPadding();

    /** The value was not an authentic outcome of its key in this format; {@link #getMessage()} says why. */
    static final class Rejected extends Exception {
        private static final long serialVersionUID = 1L;
        private final boolean olderFormat;

        Rejected(String why, boolean olderFormat) {
            super(why, null, false, false);
            this.olderFormat = olderFormat;
        }

        /** Whether it is a value of format 1 (unauthenticated), as nodes of an older version write. */
        boolean olderFormat() {
            return olderFormat;
        }
    }

    private final Key signing;
    private final List<Key> accepted;

    /**
     * @param secret   signs the values written, and verifies
     * @param accepted verify only (a secret being rotated out, or in)
     */
    RecordFormat(byte[] secret, List<byte[]> accepted) {
        this.signing = Key.of(secret);
        this.accepted = accepted.stream().filter(s -> !Arrays.equals(s, secret)).map(Key::of).toList();
    }

    byte[] encode(byte[] redisKey, IdempotencyRecord record) {
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
        byte[] json = MAPPER.writeValueAsBytes(o);
        byte[] mac = MAC_ENCODER.encode(mac(signing, redisKey, json, 0));
        return ByteBuffer.allocate(HEADER.length + mac.length + 1 + json.length).put(HEADER).put(mac).put((byte) '.')
                .put(json).array();
    }

    /**
     * The completed record {@code value} holds, once it verifies as written under {@code redisKey} for
     * {@code keyHash}.
     *
     * @throws Rejected when it does not verify, is of another format, or does not read back
     */
    IdempotencyRecord decode(byte[] redisKey, byte[] keyHash, byte[] value) throws Rejected {
        int json = HEADER.length + MAC_CHARS + 1;
        if (value.length > 0 && value[0] == '{') {
            throw new Rejected("a value of format 1, which carries no MAC (written by an older version)", true);
        }
        if (value.length <= json || !Arrays.equals(value, 0, HEADER.length, HEADER, 0, HEADER.length)
                || value[json - 1] != '.') {
            throw new Rejected("not a value of format " + FORMAT, false);
        }
        // compared as written (base64url), so that no second spelling of one MAC is accepted
        byte[] claimed = Arrays.copyOfRange(value, HEADER.length, json - 1);
        if (!verifies(claimed, redisKey, value, json)) {
            throw new Rejected("its MAC does not verify with the pre-filter's secrets (a value written without the"
                    + " secret, changed, or copied from another key)", false);
        }
        IdempotencyRecord record;
        try {
            record = read(keyHash, value, json);
        } catch (RuntimeException e) {
            // authentic, so written by a node with the secret: of a shape this version does not read
            throw new Rejected("an authentic value this version cannot read (" + e.getMessage() + ")", false);
        }
        return record;
    }

    private boolean verifies(byte[] claimed, byte[] redisKey, byte[] value, int json) {
        if (MessageDigest.isEqual(claimed, MAC_ENCODER.encode(mac(signing, redisKey, value, json)))) {
            return true;
        }
        for (Key other : accepted) {
            if (MessageDigest.isEqual(claimed, MAC_ENCODER.encode(mac(other, redisKey, value, json)))) {
                return true;
            }
        }
        return false;
    }

    private static IdempotencyRecord read(byte[] keyHash, byte[] value, int from) {
        JsonNode o = MAPPER.readTree(Arrays.copyOfRange(value, from, value.length));
        JsonNode format = o.get("format");
        if (format == null || !format.isInt() || format.intValue() != FORMAT) {
            throw new IllegalArgumentException("format is not " + FORMAT);
        }
        if (!Arrays.equals(HEX.parseHex(text(o, "keyHash")), keyHash)) {
            throw new IllegalArgumentException("it names another key hash");
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
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** The MAC of the value's JSON ({@code data} from {@code from}) stored under {@code redisKey}. */
    private static byte[] mac(Key key, byte[] redisKey, byte[] data, int from) {
        Mac mac = key.mac();
        mac.update(DOMAIN);
        mac.update(ByteBuffer.allocate(Integer.BYTES).putInt(redisKey.length).array());
        mac.update(redisKey);
        mac.update(data, from, data.length - from);
        return mac.doFinal();
    }

    /** A secret, and a Mac keyed with it to copy (a Mac is not thread-safe: each call uses its own). */
    private record Key(SecretKeySpec spec, Mac keyed) {

        static Key of(byte[] secret) {
            SecretKeySpec spec = new SecretKeySpec(secret, ALGORITHM);
            return new Key(spec, make(spec));
        }

        /** A Mac of this call's own: a clone of the keyed one, cheaper than a new one, where the provider can. */
        Mac mac() {
            try {
                return (Mac) keyed.clone();
            } catch (CloneNotSupportedException e) {
                return make(spec);
            }
        }

        private static Mac make(SecretKeySpec spec) {
            try {
                Mac mac = Mac.getInstance(ALGORITHM);
                mac.init(spec);
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("this JVM has no " + ALGORITHM + ", which every Java SE has", e);
            }
        }
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
