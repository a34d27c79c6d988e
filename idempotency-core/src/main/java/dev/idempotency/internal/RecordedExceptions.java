package dev.idempotency.internal;

import java.io.ByteArrayOutputStream;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * How a recorded business exception is stored in the result column, apart from any value: the byte {@code 0x00},
 * then the UTF-8 JSON {@code {"exception":"<binary class name>","message":<string or null>}}.
 *
 * <p>No JSON text can start with {@code 0x00}, and the executor refuses to record a value whose encoding starts with
 * it (a custom {@code ResultCodec} must never write one), so a value and a recorded exception can never be taken for
 * each other. The class name is only ever compared with the operation's declared {@code replayExceptions}: a row
 * naming any other class is refused, never loaded.
 */
public final class RecordedExceptions {

    /** The first byte of a recorded exception; never the first byte of a recorded value. */
    public static final byte MARKER = 0x00;

    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private RecordedExceptions() {
    }

    /** A recorded exception, read back: the class name it claims and its message. */
    public record Recorded(String exception, @Nullable String message) {
    }

    /** Whether {@code data} is a recorded exception rather than a value. */
    public static boolean isException(byte[] data) {
        return data.length > 0 && data[0] == MARKER;
    }

    /** Encodes a recorded exception. */
    public static byte[] encode(Class<? extends Throwable> type, @Nullable String message) {
        ObjectNode node = JSON.createObjectNode();
        node.put("exception", type.getName());
        node.put("message", message);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(MARKER);
        out.writeBytes(JSON.writeValueAsBytes(node));
        return out.toByteArray();
    }

    /**
     * Decodes a recorded exception strictly: an object with exactly a string {@code exception} and a string or null
     * {@code message}.
     *
     * @throws IllegalArgumentException if the bytes are anything else
     */
    public static Recorded decode(byte[] data) {
        if (!isException(data)) {
            throw new IllegalArgumentException("not a recorded exception");
        }
        JsonNode node;
        try {
            node = JSON.readTree(java.util.Arrays.copyOfRange(data, 1, data.length));
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the recorded exception is not readable JSON: "
                    + e.getOriginalMessage(), e);
        }
        // exactly two properties, and both of them present: nothing else can ride along
        if (node == null || !node.isObject() || node.size() != 2 || !node.path("exception").isString()
                || !(node.path("message").isString() || node.path("message").isNull())) {
            throw new IllegalArgumentException("the recorded exception is not of the form"
                    + " {\"exception\": <class name>, \"message\": <string or null>}");
        }
        JsonNode message = node.get("message");
        return new Recorded(node.get("exception").asString(), message.isNull() ? null : message.asString());
    }
}
