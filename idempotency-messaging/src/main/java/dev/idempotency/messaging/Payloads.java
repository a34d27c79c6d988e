package dev.idempotency.messaging;

import dev.idempotency.internal.Keys;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** What {@code #payload} is in a key expression: a JSON body as maps and lists, any other text as a string. */
final class Payloads {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    /**
     * For what is fingerprinted: numbers as written ({@code BigDecimal}, scale kept, never rounded to a double) and a
     * duplicate property refused, as the engine's canonical form wants them.
     */
    private static final JsonMapper EXACT = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private Payloads() {
    }

    /**
     * A message body as a key expression reads it: a JSON object or array as {@code Map}s and {@code List}s (so that
     * {@code #payload['orderNo']} works), anything else as UTF-8 text.
     *
     * @param json whether the body is known to be JSON (a content type says so); otherwise it is tried when it starts
     *             with {@code {} or {@code [}
     */
    static @Nullable Object readable(byte @Nullable [] body, boolean json) {
        if (body == null) {
            return null;
        }
        String text = new String(body, StandardCharsets.UTF_8);
        return readable(text, json);
    }

    static Object readable(String text, boolean json) {
        return read(JSON, text, json);
    }

    /**
     * The payload as a fingerprint expression reads it: as {@link #readable}, with JSON numbers exact and a
     * duplicate property making the body text rather than JSON.
     *
     * @param body the delivered body: bytes, text, or an object the consumer already deserialized (itself)
     */
    static @Nullable Object exact(@Nullable Object body, boolean json) {
        if (body instanceof byte[] bytes) {
            return read(EXACT, new String(bytes, StandardCharsets.UTF_8), json);
        }
        return body instanceof String text ? read(EXACT, text, json) : body;
    }

    /**
     * What the default fingerprint takes of a body: the SHA-256 of its bytes (of a text's UTF-8), so that a difference
     * in any byte is another payload and a large body costs no JSON; an object the consumer deserialized is itself,
     * fingerprinted in the engine's canonical JSON.
     */
    static @Nullable Object digest(@Nullable Object body) {
        byte[] bytes = body instanceof byte[] b ? b
                : body instanceof String text ? text.getBytes(StandardCharsets.UTF_8) : null;
        return bytes == null ? body : HexFormat.of().formatHex(Keys.sha256Of(bytes));
    }

    private static Object read(JsonMapper mapper, String text, boolean json) {
        String trimmed = text.stripLeading();
        if (json || trimmed.startsWith("{") || trimmed.startsWith("[")) {
            try {
                return mapper.readValue(text, Object.class);
            } catch (JacksonException e) {
                // not JSON after all: the text is what there is
                return text;
            }
        }
        return text;
    }
}
