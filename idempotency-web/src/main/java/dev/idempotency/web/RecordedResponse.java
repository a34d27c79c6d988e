package dev.idempotency.web;

import java.util.List;
import java.util.Map;

/**
 * What is recorded of a first response: its status, the allow-listed headers, and the body's bytes as sent. Stored
 * as the engine stores any result (JSON, by the application's {@code ResultCodec}); the fields are the stored
 * format, so they do not change.
 *
 * @param status  the HTTP status
 * @param headers the allow-listed headers, by name as configured
 * @param body    the body, byte for byte
 */
record RecordedResponse(int status, Map<String, List<String>> headers, byte[] body) {
}
