package dev.idempotency.web.internal;

import java.util.List;
import java.util.Map;

/**
 * What is recorded of a first response: its status, the allow-listed headers, and the body's bytes as sent.
 *
 * @param status  the HTTP status
 * @param headers the allow-listed headers, by name as configured
 * @param body    the body, byte for byte
 */
public record RecordedResponse(int status, Map<String, List<String>> headers, byte[] body) {
}
