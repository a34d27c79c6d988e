package dev.idempotency;

/**
 * An idempotency key made of several parts, without the ambiguity of joining them by hand: {@code "A:" + a + ":" + b}
 * gives one key for ({@code "x:y"}, {@code "z"}) and ({@code "x"}, {@code "y:z"}), {@code KeyParts.of("A", a, b)}
 * gives two. Each part is written as text with every {@code \} and {@code :} in it escaped by a {@code \}, and the
 * parts are joined with {@code :}, so that one key text comes from one list of parts only:
 *
 * <pre>{@code
 * KeyParts.of("ORDER", "A-1", 3)     // ORDER:A-1:3
 * KeyParts.of("A", "x:y", "z")       // A:x\:y:z
 * KeyParts.of("A", "x", "y:z")       // A:x:y\:z
 * executor.execute(refund, KeyParts.of("REFUND", tenantOrder, refundNo), args, action);
 * }</pre>
 *
 * The result is an ordinary key: the one people see in events, logs and {@link IdempotencyAdmin}, and the one that is
 * hashed, with the same rules as any key (at most 1,024 characters, escapes counted; no control characters). A key
 * whose parts hold no {@code \} or {@code :} is the text a hand-written join with {@code :} gives, so moving a key
 * from {@code 'ORDER:' + #no + ':' + #line} to {@code #parts('ORDER', #no, #line)} keeps the recorded keys of every
 * such call.
 *
 * <p>In a SpEL key expression ({@code @Idempotent}, the message listener advice) the same function is
 * {@code #parts(...)}: {@code key = "#parts('ORDER', #orderNo, #lineNo)"}.
 */
public final class KeyParts {

    private KeyParts() {
    }

    /**
     * The key made of {@code parts}, in order.
     *
     * @param parts at least one; each is its text ({@code toString()}, which must be the class's own: an array or a
     *              plain object would name the instance, a new key at every call)
     * @return the parts, each escaped, joined with {@code :}
     * @throws IllegalArgumentException if there is no part, or a part is null, empty or has no text of its own
     *                                  (naming the part by its position, from 1)
     */
    public static String of(Object... parts) {
        if (parts == null || parts.length == 0) {
            throw new IllegalArgumentException("a key needs at least one part");
        }
        StringBuilder key = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            String text = text(parts[i], i + 1);
            if (i > 0) {
                key.append(':');
            }
            for (int c = 0; c < text.length(); c++) {
                char ch = text.charAt(c);
                if (ch == '\\' || ch == ':') {
                    key.append('\\');
                }
                key.append(ch);
            }
        }
        return key.toString();
    }

    private static String text(Object part, int position) {
        if (part == null) {
            // a part that is null would be the text "null": one key for every call that lacks the value
            throw new IllegalArgumentException("key part " + position + " is null");
        }
        String text;
        if (part instanceof String s) {
            text = s;
        } else if (part.getClass().isArray() || identityToString(part.getClass())) {
            throw new IllegalArgumentException("key part " + position + " is a " + part.getClass().getTypeName()
                    + ", which has no toString() of its own: its text names the instance, a new key at every call");
        } else {
            text = part.toString();
        }
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("key part " + position + " is empty; a key built from a missing"
                    + " value would be shared by every call that lacks it");
        }
        return text;
    }

    /** Whether {@code type} inherits {@code Object.toString()}, the identity text. */
    private static boolean identityToString(Class<?> type) {
        try {
            return type.getMethod("toString").getDeclaringClass() == Object.class;
        } catch (NoSuchMethodException e) {
            return true;
        }
    }
}
