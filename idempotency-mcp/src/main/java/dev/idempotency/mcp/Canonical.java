package dev.idempotency.mcp;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/** The canonical form of a call's decoded arguments (object keys sorted), and its SHA-256. */
final class Canonical {

    private Canonical() {
    }

    /** Hex SHA-256 of the canonical JSON of {@code value}, as {@code mapper} writes it. */
    static String digest(JsonMapper mapper, @Nullable Object value) {
        Object tree = sorted(mapper.convertValue(value, Object.class));
        return sha256Hex(mapper.writeValueAsString(tree));
    }

    static String sha256Hex(String text) {
        return HexFormat.of().formatHex(sha256(text.getBytes(StandardCharsets.UTF_8)));
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static @Nullable Object sorted(@Nullable Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new TreeMap<>();
            map.forEach((k, v) -> out.put(String.valueOf(k), sorted(v)));
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            list.forEach(v -> out.add(sorted(v)));
            return out;
        }
        return value;
    }
}
