package dev.idempotency.messaging;

import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/** What {@code #payload} is in a key expression: a JSON body as maps and lists, any other text as a string. */
final class Payloads {

    private static final JsonMapper JSON = JsonMapper.builder().build();

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
        String trimmed = text.stripLeading();
        if (json || trimmed.startsWith("{") || trimmed.startsWith("[")) {
            try {
                return JSON.readValue(text, Object.class);
            } catch (JacksonException e) {
                // not JSON after all: the text is what there is
                return text;
            }
        }
        return text;
    }
}
