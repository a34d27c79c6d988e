package dev.idempotency.internal;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
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
     * Normalizes a key to NFC and checks it: not null, not blank, at most {@value #MAX_KEY_LENGTH} code points, no
     * control character (C0, DEL, C1), no line or paragraph separator (U+2028, U+2029: they break log lines like a
     * newline), no unpaired surrogate (it has no UTF-8 form, so two different keys would hash alike). Not trimmed and
     * not case-folded: {@code "A-1"}, {@code "a-1"} and {@code "A-1 "} are three keys.
     *
     * @return the normalized key, or a reason it is refused as the exception message suffix
     * @throws IllegalArgumentException with the reason: null, blank, too long or a control character
     */
    public static String normalize(String key) {
        if (key == null) {
            throw new IllegalArgumentException("the key is null");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException(key.isEmpty() ? "the key is empty" : "the key is blank");
        }
        if (key.length() > 4 * MAX_KEY_LENGTH) {
            // refused before normalizing: NFC of a hostile megabyte key is work for nothing
            throw new IllegalArgumentException("the key has " + key.length() + " UTF-16 units, more than "
                    + MAX_KEY_LENGTH + " characters allowed");
        }
        String nfc = Normalizer.normalize(key, Normalizer.Form.NFC);
        int characters = nfc.codePointCount(0, nfc.length());
        if (characters > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("the key has " + characters + " characters, more than "
                    + MAX_KEY_LENGTH + " allowed");
        }
        for (int i = 0; i < nfc.length(); ) {
            int cp = nfc.codePointAt(i);
            if (Character.isISOControl(cp) || Character.getType(cp) == Character.LINE_SEPARATOR
                    || Character.getType(cp) == Character.PARAGRAPH_SEPARATOR) {
                throw new IllegalArgumentException("the key holds a control character (U+"
                        + String.format("%04X", cp) + ") at index " + i);
            }
            if (Character.getType(cp) == Character.SURROGATE) {
                throw new IllegalArgumentException("the key holds an unpaired surrogate at index " + i);
            }
            i += Character.charCount(cp);
        }
        return nfc;
    }

    /** The normalized key cut to {@value #MAX_READABLE_LENGTH} characters, never inside a surrogate pair. */
    public static String readable(String normalizedKey) {
        if (normalizedKey.length() <= MAX_READABLE_LENGTH) {
            return normalizedKey;
        }
        int end = MAX_READABLE_LENGTH;
        if (Character.isHighSurrogate(normalizedKey.charAt(end - 1))) {
            end--;
        }
        return normalizedKey.substring(0, end);
    }

    /**
     * SHA-256 of the length-prefixed UTF-8 of operation, scope and normalized key. The length prefixes keep
     * ({@code "a:b"}, {@code "c"}) and ({@code "a"}, {@code "b:c"}) apart.
     *
     * @throws IllegalArgumentException if a part holds an unpaired surrogate (it has no UTF-8 form: encoding it
     *                                  leniently would make two different scopes or keys hash alike)
     */
    public static byte[] hash(String operation, String scope, String normalizedKey) {
        MessageDigest sha = sha256();
        String[] names = {"operation", "scope", "key"};
        String[] parts = {operation, scope, normalizedKey};
        for (int i = 0; i < parts.length; i++) {
            byte[] bytes = strictUtf8(parts[i], names[i]);
            sha.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
            sha.update(bytes);
        }
        return sha.digest();
    }

    private static byte[] strictUtf8(String s, String what) {
        try {
            ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            return bytes;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("the " + what + " holds an unpaired surrogate");
        }
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
