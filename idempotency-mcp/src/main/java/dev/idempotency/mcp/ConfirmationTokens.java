package dev.idempotency.mcp;

import dev.idempotency.Tier;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * Confirmation tokens: minted for one call (principal, operation, key, argument digest) with an expiry, protected by
 * an HMAC-SHA256 under the server's secret, and consumed at most once through the store (a claim under
 * {@link McpConfirmations#CONSUMED_OPERATION}).
 */
final class ConfirmationTokens {

    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] secret;
    private final Duration ttl;
    private final ConfirmationRecords records;

    ConfirmationTokens(byte[] secret, Duration ttl, ConfirmationRecords records) {
        this.secret = secret.clone();
        this.ttl = ttl;
        this.records = records;
    }

    /** A token and when it expires. */
    record Minted(String token, Instant expiresAt) {
    }

    /** A key of its own for {@code purpose}, derived from the secret (HMAC-SHA256 of the purpose). */
    byte[] derivedKey(String purpose) {
        return mac(purpose);
    }

    /** A random key of this process, for a request state no other node opens. */
    static byte[] randomKey() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return key;
    }

    /** A token for this call, valid for the gate's ttl. */
    Minted mint(String principal, String operation, String key, String argumentDigest) {
        byte[] nonce = new byte[16];
        RANDOM.nextBytes(nonce);
        Instant expiresAt = records.now().plus(ttl).truncatedTo(ChronoUnit.SECONDS);
        String payload = String.join("|", "v1", B64.encodeToString(nonce), Long.toString(expiresAt.getEpochSecond()),
                binding(principal, operation, key, argumentDigest));
        String body = B64.encodeToString(payload.getBytes(StandardCharsets.UTF_8));
        return new Minted(body + "." + B64.encodeToString(mac(body)), expiresAt);
    }

    /** The token's expiry when it is valid for this call (signed, unexpired, bound to it), else null. */
    @Nullable Instant verify(String token, String principal, String operation, String key, String argumentDigest) {
        int dot = token.indexOf('.');
        if (dot <= 0 || dot != token.lastIndexOf('.')) {
            return null;
        }
        String body = token.substring(0, dot);
        byte[] sent;
        String payload;
        try {
            sent = B64D.decode(token.substring(dot + 1));
            payload = new String(B64D.decode(body), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (!MessageDigest.isEqual(sent, mac(body))) {
            return null;
        }
        String[] parts = payload.split("\\|", -1);
        if (parts.length != 4 || !"v1".equals(parts[0])) {
            return null;
        }
        long expires;
        try {
            expires = Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            return null;
        }
        Instant expiresAt = Instant.ofEpochSecond(expires);
        if (!records.now().isBefore(expiresAt)) {
            return null;
        }
        return MessageDigest.isEqual(parts[3].getBytes(StandardCharsets.UTF_8),
                binding(principal, operation, key, argumentDigest).getBytes(StandardCharsets.UTF_8)) ? expiresAt : null;
    }

    /** Whether the token was consumed already (by a run, or by an answer to {@code input_required}). */
    boolean used(String token) {
        return records.store().find(ConfirmationRecords.id(token)).isPresent();
    }

    /** Claims the token's nonce in the store: true for the first caller only, on every node. */
    boolean consume(String token) {
        byte[] id = ConfirmationRecords.id(token);
        Instant now = records.nowMillis();
        // the record outlives the token, so a replayed token finds it until it could no longer verify anyway
        Instant until = now.plus(ttl).plus(ttl);
        if (!records.claim(id, McpConfirmations.CONSUMED_OPERATION, Tier.IRREVERSIBLE, now, until,
                Duration.ofSeconds(5))) {
            return false;
        }
        records.store().complete(id, until, new byte[0], until);
        return true;
    }

    /** What a token and an approval are bound to: the call's principal, operation, key and argument digest. */
    static String binding(String principal, String operation, String key, String argumentDigest) {
        return Canonical.sha256Hex(ConfirmationRecords.fields(principal, operation, key) + "|" + argumentDigest);
    }

    private byte[] mac(String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(body.getBytes(StandardCharsets.US_ASCII));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java runtime has HmacSHA256", e);
        }
    }
}
