package dev.idempotency.web;

/**
 * The {@code Idempotency-Key} header's value: an RFC 8941 sf-string ({@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}),
 * as the draft says, or a bare token ({@code 8e03978e-40d5-43e8-bc93-6894a57f9324}), which many clients send.
 */
public final class IdempotencyKeyHeader {

    /** The header's name. */
    public static final String NAME = "Idempotency-Key";

    /** The longest key accepted unless the adapter says otherwise: enough for any UUID, ULID or hash. */
    public static final int DEFAULT_MAX_LENGTH = 255;

    private IdempotencyKeyHeader() {
    }

    /**
     * The key in {@code value}.
     *
     * @param value     the header's value
     * @param maxLength the most characters the key may have
     * @return the key, without quotes or escapes
     * @throws IllegalArgumentException if {@code value} is not one sf-string or bare token of 1 to {@code maxLength}
     *                                  characters; the message says what is wrong (never with the value itself)
     */
    public static String parse(String value, int maxLength) {
        String v = value.strip();
        String key;
        if (v.startsWith("\"")) {
            StringBuilder out = new StringBuilder(v.length());
            int i = 1;
            boolean closed = false;
            for (; i < v.length(); i++) {
                char c = v.charAt(i);
                if (c == '\\') {
                    if (i + 1 >= v.length() || (v.charAt(i + 1) != '"' && v.charAt(i + 1) != '\\')) {
                        throw new IllegalArgumentException("a backslash in an sf-string may only escape '\"' or '\\'");
                    }
                    out.append(v.charAt(++i));
                } else if (c == '"') {
                    closed = true;
                    break;
                } else if (c < 0x20 || c > 0x7e) {
                    throw new IllegalArgumentException("an sf-string holds printable ASCII characters only");
                } else {
                    out.append(c);
                }
            }
            if (!closed) {
                throw new IllegalArgumentException("the sf-string has no closing quote");
            }
            if (i != v.length() - 1) {
                throw new IllegalArgumentException("the header holds more than one sf-string (parameters or a list)");
            }
            key = out.toString();
        } else {
            for (int i = 0; i < v.length(); i++) {
                if (!isTokenChar(v.charAt(i))) {
                    throw new IllegalArgumentException(
                            "a key that is not a quoted sf-string must be a token (letters, digits, and !#$%&'*+-.^_`|~:/)");
                }
            }
            key = v;
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("the key is empty");
        }
        if (key.length() > maxLength) {
            throw new IllegalArgumentException("the key has " + key.length() + " characters, more than " + maxLength);
        }
        return key;
    }

    /**
     * {@code key} as an sf-string, as the draft says a client sends it.
     *
     * @throws IllegalArgumentException if the key is empty or holds a character an sf-string cannot carry
     */
    public static String format(String key) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException("an idempotency key must not be empty");
        }
        StringBuilder out = new StringBuilder(key.length() + 2).append('"');
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("an idempotency key sent over HTTP holds printable ASCII only");
            }
            if (c == '"' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.append('"').toString();
    }

    // RFC 9110 tchar, plus ':' and '/' as in an RFC 8941 sf-token; a leading digit is accepted (UUIDs)
    private static boolean isTokenChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
    }
}
