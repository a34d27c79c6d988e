package dev.idempotency.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;

/**
 * The stored identity of a key: SHA-256 over (operation, scope, NFC key), each length-prefixed so that no two
 * different triples hash the same bytes. Unaffected by database charsets, collations, case folding or trailing-space
 * rules, and 32 bytes however long the key.
 */
public final class Keys {

    /** Longest key accepted, in characters (Unicode code points) after NFC normalization. */
    public static final int MAX_KEY_LENGTH = 1024;
    /** Longest readable key kept beside the hash. */
    public static final int MAX_READABLE_LENGTH = 255;

    private Keys() {
    }

    /**
     * Longest run of combining marks (Unicode categories Mn, Mc, Me) accepted after one base character: the limit of
     * Unicode's stream-safe text format (UAX #15), which no real text reaches. NFC reorders such a run, at a cost that
     * grows with the square of its length, so longer runs are refused before normalizing.
     */
    public static final int MAX_COMBINING_RUN = 30;

    /**
     * Normalizes a key to NFC and checks it: not null, not blank, at most {@value #MAX_KEY_LENGTH} code points, no
     * run of more than {@value #MAX_COMBINING_RUN} combining marks, no control character (C0, DEL, C1), no format
     * character (category Cf: bidirectional overrides such as U+202E, zero-width characters, U+200D included), no line
     * or paragraph separator (U+2028, U+2029: they break log lines like a newline), no unpaired surrogate (it has no
     * UTF-8 form, so two different keys would hash alike). Not trimmed and not case-folded: {@code "A-1"},
     * {@code "a-1"} and {@code "A-1 "} are three keys.
     *
     * <p>The length in UTF-16 units and the runs of combining marks are checked before normalizing, in one linear
     * pass: a hostile key costs no more to refuse than a normal one costs to accept.
     *
     * @return the normalized key
     * @throws IllegalArgumentException with the reason: null, blank, too long, too many combining marks in a row, or
     *                                  a refused character (named by code point and index, never echoed)
     */
    public static String normalize(String key) {
        if (key == null) {
            throw new IllegalArgumentException("the key is null");
        }
        if (key.length() > 4 * MAX_KEY_LENGTH) {
            // refused before anything else: NFC (or even isBlank) of a hostile megabyte key is work for nothing
            throw new IllegalArgumentException("the key has " + key.length() + " UTF-16 units, more than "
                    + MAX_KEY_LENGTH + " characters allowed");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException(key.isEmpty() ? "the key is empty" : "the key is blank");
        }
        if (checkCharacters(key) < '\u0300') {
            // every character below U+0300 is in NFC and composes with nothing (Unicode's quick check, ICU's
            // minCompNoMaybeCP): the usual ASCII or Latin-1 key is its own NFC, at no copy; and it is not longer than
            // MAX_KEY_LENGTH checked below, since its code points are its chars
            if (key.length() > MAX_KEY_LENGTH) {
                throw new IllegalArgumentException("the key has " + key.length() + " characters, more than "
                        + MAX_KEY_LENGTH + " allowed");
            }
            return key;
        }
        // NFC composes and decomposes only characters that pass checkCharacters into others that do (a refused
        // character is no composite, and no accepted character decomposes to one: KeysTest proves it for every code
        // point), so the normalized key needs no second check
        String nfc = Normalizer.normalize(key, Normalizer.Form.NFC);
        int characters = nfc.codePointCount(0, nfc.length());
        if (characters > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("the key has " + characters + " characters, more than "
                    + MAX_KEY_LENGTH + " allowed");
        }
        return nfc;
    }

    /**
     * Refuses the characters and runs of combining marks that {@link #normalize} names, in one pass.
     *
     * @return the highest code point in {@code key}
     */
    private static int checkCharacters(String key) {
        int run = 0;
        int highest = 0;
        for (int i = 0; i < key.length(); ) {
            int cp = key.codePointAt(i);
            highest = Math.max(highest, cp);
            int type = Character.getType(cp);
            String refused = refusedCharacter(cp, type);
            if (refused != null) {
                throw new IllegalArgumentException("the key holds " + refused + " (U+" + String.format("%04X", cp)
                        + ") at index " + i);
            }
            if (type == Character.NON_SPACING_MARK || type == Character.COMBINING_SPACING_MARK
                    || type == Character.ENCLOSING_MARK) {
                if (++run > MAX_COMBINING_RUN) {
                    throw new IllegalArgumentException("the key holds more than " + MAX_COMBINING_RUN
                            + " combining marks in a row (at index " + i + "), which no text needs");
                }
            } else {
                run = 0;
            }
            i += Character.charCount(cp);
        }
        return highest;
    }

    /** What kind of refused character {@code cp} is, or null if keys may hold it. */
    private static String refusedCharacter(int cp, int type) {
        if (Character.isISOControl(cp)) {
            return "a control character";
        }
        if (type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
            return "a line or paragraph separator";
        }
        if (type == Character.FORMAT) {
            return "an invisible format character";
        }
        if (type == Character.SURROGATE) {
            return "an unpaired surrogate";
        }
        return null;
    }

    /**
     * The key cut to {@value #MAX_READABLE_LENGTH} characters, never inside a surrogate pair, for people: the stored
     * readable key, events, messages. A normalized key comes back unchanged (at most cut); in a key that was refused
     * (or not checked yet), every character that {@link #normalize} refuses is escaped as in Java source (backslash,
     * u, four hex digits), so that a newline, a bidirectional override or a lone surrogate in a refused key never
     * reaches a log line or a listener raw.
     */
    public static String readable(String key) {
        return escape(cut(key));
    }

    /**
     * {@link #readable} of a key that {@link #normalize} returned, without the pass that looks for characters to
     * escape: normalize refused every one of them, and the cut never parts a surrogate pair.
     */
    public static String readableNormalized(String normalizedKey) {
        return cut(normalizedKey);
    }

    private static String cut(String key) {
        if (key.length() <= MAX_READABLE_LENGTH) {
            return key;
        }
        int end = MAX_READABLE_LENGTH;
        if (Character.isHighSurrogate(key.charAt(end - 1)) && Character.isLowSurrogate(key.charAt(end))) {
            end--;
        }
        return key.substring(0, end);
    }

    /** {@code text} with every character a key may not hold escaped as in Java source, one UTF-16 unit at a time. */
    public static String escape(String text) {
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int n = Character.charCount(cp);
            if (refusedCharacter(cp, Character.getType(cp)) != null) {
                if (sb == null) {
                    sb = new StringBuilder(text.length() + 16).append(text, 0, i);
                }
                for (int j = i; j < i + n; j++) {
                    sb.append(String.format("\\u%04X", (int) text.charAt(j)));
                }
            } else if (sb != null) {
                sb.append(text, i, i + n);
            }
            i += n;
        }
        return sb == null ? text : sb.toString();
    }

    /**
     * SHA-256 of the length-prefixed UTF-8 of operation, scope and normalized key. The length prefixes keep
     * ({@code "a:b"}, {@code "c"}) and ({@code "a"}, {@code "b:c"}) apart.
     *
     * @throws IllegalArgumentException if a part holds an unpaired surrogate (it has no UTF-8 form: encoding it
     *                                  leniently would make two different scopes or keys hash alike)
     */
    public static byte[] hash(String operation, String scope, String normalizedKey) {
        // every part is checked before the digest is touched: a refusal leaves this thread's digest clean
        checkUtf8(operation, "operation");
        checkUtf8(scope, "scope");
        checkUtf8(normalizedKey, "key");
        Hasher h = HASHER.get();
        lengthPrefixed(h, operation);
        lengthPrefixed(h, scope);
        lengthPrefixed(h, normalizedKey);
        return h.sha.digest();
    }

    /**
     * Digests the UTF-8 byte count of {@code s} (four bytes, big-endian), then its UTF-8. A string of ASCII, the usual
     * operation name and key, goes through the thread's scratch bytes rather than a new array per part.
     */
    private static void lengthPrefixed(Hasher h, String s) {
        int n = s.length();
        byte[] b = h.scratch;
        boolean ascii = n <= b.length - 4;
        for (int i = 0; ascii && i < n; i++) {
            char c = s.charAt(i);
            b[4 + i] = (byte) c;
            ascii = c < 0x80;
        }
        if (!ascii) {
            lengthPrefixed(h.sha, s.getBytes(StandardCharsets.UTF_8));
            return;
        }
        b[0] = (byte) (n >>> 24);
        b[1] = (byte) (n >>> 16);
        b[2] = (byte) (n >>> 8);
        b[3] = (byte) n;
        h.sha.update(b, 0, n + 4);
    }

    private static void lengthPrefixed(MessageDigest sha, byte[] bytes) {
        int n = bytes.length;
        sha.update((byte) (n >>> 24));
        sha.update((byte) (n >>> 16));
        sha.update((byte) (n >>> 8));
        sha.update((byte) n);
        sha.update(bytes);
    }

    /** Refuses {@code s} if it holds an unpaired surrogate (which has no UTF-8 form). */
    private static void checkUtf8(String s, String what) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    throw new IllegalArgumentException("the " + what + " holds an unpaired surrogate");
                }
            }
        }
    }

    /**
     * This thread's SHA-256 and scratch bytes for what it digests, reused: {@code digest()} leaves the digest reset,
     * and nothing between taking it and that call can fail.
     */
    static final class Hasher {
        /** The scratch bytes' size: a key (at most 1,024 characters) with its length prefix fits. */
        static final int SCRATCH = 2048;
        final MessageDigest sha = sha256();
        final byte[] scratch = new byte[SCRATCH];
    }

    private static final ThreadLocal<Hasher> HASHER = ThreadLocal.withInitial(Hasher::new);

    /** This thread's digest and scratch bytes: whoever takes them digests (or drops) what it put in before returning. */
    static Hasher hasher() {
        return HASHER.get();
    }

    /** SHA-256 of {@code bytes}, on this thread's digest. */
    public static byte[] sha256Of(byte[] bytes) {
        return HASHER.get().sha.digest(bytes);
    }

    /** A new SHA-256 digest. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
