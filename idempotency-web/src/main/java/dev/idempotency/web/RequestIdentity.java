package dev.idempotency.web;

import dev.idempotency.internal.Fingerprints;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.Part;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;

/**
 * Which request this is, as the engine is told: the key (the {@code Idempotency-Key} header, read by
 * {@link IdempotencyKeyHeader}, inside the request's {@link RequestScope}) and the fingerprint (the method, the path,
 * the body and the annotation's chosen parameters). Every body obeys the size limit, whatever its type; the body is
 * read here, once, and the handler is given a request that reads it again.
 */
final class RequestIdentity {

    /** What {@link #read} found. */
    sealed interface Read permits NoKey, Refused, Identified {
    }

    /** The request carries no {@code Idempotency-Key} header. */
    record NoKey() implements Read {
    }

    /** The request carries a key but cannot be identified: the problem it is answered with. */
    record Refused(ProblemResponses.Problem problem) implements Read {
    }

    /**
     * The request's identity.
     *
     * @param key         the engine's key: the header's key inside the request's scope ({@link #storedKey})
     * @param request     the request to hand to the handler (its body read here, and readable again)
     * @param fingerprint what the engine fingerprints: method, path, body, chosen parameters
     */
    record Identified(String key, HttpServletRequest request, Object[] fingerprint) implements Read {
    }

    private static final NoKey NO_KEY = new NoKey();

    private final RequestScope scope;
    private final int maxKeyLength;
    private final int maxBodySize;

    RequestIdentity(RequestScope scope, int maxKeyLength, int maxBodySize) {
        this.scope = scope;
        this.maxKeyLength = maxKeyLength;
        this.maxBodySize = maxBodySize;
    }

    /**
     * Reads the header and the body of {@code request}.
     *
     * @param parameters the query or form parameters in the fingerprint ({@link IdempotentRequest#parameters()})
     */
    Read read(HttpServletRequest request, List<String> parameters) throws IOException, ServletException {
        List<String> values = Collections.list(request.getHeaders(IdempotencyKeyHeader.NAME));
        if (values.isEmpty()) {
            return NO_KEY;
        }
        String key;
        try {
            if (values.size() > 1) {
                throw new IllegalArgumentException("the request carries more than one Idempotency-Key header");
            }
            key = IdempotencyKeyHeader.parse(values.get(0), maxKeyLength);
        } catch (IllegalArgumentException e) {
            return new Refused(ProblemResponses.invalidKey(e.getMessage()));
        }
        HttpServletRequest buffered = request;
        Object body;
        // every body obeys the limit, whatever its type: by its declared length, then as it is read
        if (request.getContentLengthLong() > maxBodySize) {
            return tooLarge();
        }
        if (isMultipart(request)) {
            // DispatcherServlet has parsed the parts already: the body's stream is spent, the parts are not
            body = parts(request);
            if (body == null) {
                return tooLarge();
            }
        } else {
            byte[] bytes = readBody(request);
            if (bytes == null) {
                return tooLarge();
            }
            if (isForm(request)) {
                // read here rather than by the container, so that the limit holds for a form sent chunked too
                buffered = BufferedRequest.ofForm(request, bytes);
                body = parameters(buffered, null);
            } else {
                buffered = BufferedRequest.of(request, bytes);
                try {
                    body = bodyIdentity(request, bytes);
                } catch (IllegalArgumentException e) {
                    return new Refused(ProblemResponses.INVALID_BODY);
                }
            }
        }
        Object[] fingerprint = {request.getMethod(), request.getRequestURI(), body, parameters(buffered, parameters)};
        return new Identified(storedKey(scope.scope(request), key), buffered, fingerprint);
    }

    /** See {@link IdempotentRequestHandlerAdapter#storedKey}. */
    static String storedKey(String scope, String key) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(scope.getBytes(StandardCharsets.UTF_8)))
                + ":" + key;
    }

    private Refused tooLarge() {
        return new Refused(ProblemResponses.bodyTooLarge(maxBodySize));
    }

    /**
     * Each part by name: its file name, content type and the SHA-256 of its bytes; null when the parts hold more
     * than {@link #maxBodySize} bytes in all (a body sent chunked, whose length was not declared).
     */
    private @Nullable Map<String, List<Map<String, @Nullable String>>> parts(HttpServletRequest request)
            throws IOException, ServletException {
        long size = 0;
        for (Part part : request.getParts()) {
            size += part.getSize();
        }
        if (size > maxBodySize) {
            return null;
        }
        Map<String, List<Map<String, @Nullable String>>> parts = new TreeMap<>();
        for (Part part : request.getParts()) {
            MessageDigest digest = sha256Digest();
            try (InputStream in = part.getInputStream()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) != -1; ) {
                    digest.update(buffer, 0, n);
                }
            }
            Map<String, @Nullable String> facts = new TreeMap<>();
            facts.put("filename", part.getSubmittedFileName());
            facts.put("contentType", part.getContentType());
            facts.put("sha256", HexFormat.of().formatHex(digest.digest()));
            parts.computeIfAbsent(part.getName(), name -> new ArrayList<>()).add(facts);
        }
        return parts;
    }

    /** The body, or null when it is longer than {@link #maxBodySize}. */
    private byte @Nullable [] readBody(HttpServletRequest request) throws IOException {
        if (request.getContentLengthLong() > maxBodySize) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = request.getInputStream()) {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) != -1; ) {
                if (out.size() + n > maxBodySize) {
                    return null;
                }
                out.write(buffer, 0, n);
            }
        }
        return out.toByteArray();
    }

    /**
     * A JSON body as the engine's fingerprint reads JSON ({@link Fingerprints#readJson}: member order and white space
     * do not count, every digit and the scale of a number do), any other body by its bytes' hash.
     *
     * @throws IllegalArgumentException if the body is labelled JSON but is not one JSON document the fingerprint can
     *                                  read (a member name twice in one object, a syntax error)
     */
    private static @Nullable Object bodyIdentity(HttpServletRequest request, byte[] bytes) {
        if (bytes.length == 0) {
            return null;
        }
        if (isJson(request)) {
            return Map.of("json", Fingerprints.readJson(bytes));
        }
        return Map.of("sha256", HexFormat.of().formatHex(sha256(bytes)));
    }

    private static boolean isJson(HttpServletRequest request) {
        String type = request.getContentType();
        if (type == null) {
            return false;
        }
        MediaType media;
        try {
            media = MediaType.parseMediaType(type);
        } catch (RuntimeException unparsable) {
            return false; // fingerprinted by its bytes; the message converters will refuse the type
        }
        return media.isCompatibleWith(MediaType.APPLICATION_JSON) || media.getSubtype().endsWith("+json");
    }

    private static boolean isForm(HttpServletRequest request) {
        String type = request.getContentType();
        return type != null
                && type.toLowerCase(Locale.ROOT).startsWith(MediaType.APPLICATION_FORM_URLENCODED_VALUE);
    }

    private static boolean isMultipart(HttpServletRequest request) {
        String type = request.getContentType();
        return type != null && type.toLowerCase(Locale.ROOT).startsWith("multipart/");
    }

    private static Map<String, List<String>> parameters(HttpServletRequest request, @Nullable List<String> names) {
        Map<String, List<String>> chosen = new TreeMap<>();
        if (names == null) {
            request.getParameterMap().forEach((name, values) -> chosen.put(name, List.of(values)));
        } else {
            for (String name : names) {
                String[] values = request.getParameterValues(name);
                if (values != null) {
                    chosen.put(name, List.of(values));
                }
            }
        }
        return chosen;
    }

    private static byte[] sha256(byte[] bytes) {
        return sha256Digest().digest(bytes);
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
