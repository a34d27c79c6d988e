package dev.idempotency.internal;

import java.nio.ByteBuffer;
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

    /** Longest key accepted, in characters after NFC normalization. */
    public static final int MAX_KEY_LENGTH = 1024;
    /** Longest readable key kept beside the hash. */
    public static final int MAX_READABLE_LENGTH = 255;

    private Keys() {
    }

    /**
     * Normalizes a key to NFC and checks it.
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
        String nfc = Normalizer.normalize(key, Normalizer.Form.NFC);
        if (nfc.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("the key has " + nfc.length() + " characters, more than "
                    + MAX_KEY_LENGTH + " allowed");
        }
        for (int i = 0; i < nfc.length(); ) {
            int cp = nfc.codePointAt(i);
            if (Character.isISOControl(cp)) {
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

    /** SHA-256 of the length-prefixed UTF-8 of operation, scope and normalized key. */
    public static byte[] hash(String operation, String scope, String normalizedKey) {
        MessageDigest sha = sha256();
        for (String part : new String[] {operation, scope, normalizedKey}) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            sha.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
            sha.update(bytes);
        }
        return sha.digest();
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
