package dev.idempotency.internal;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the durations of {@code @Idempotent}: {@code 500ms}, {@code 30s}, {@code 15m}, {@code 24h}, {@code 7d}, or
 * ISO-8601 ({@code PT24H}, {@code P7D}). Internal: shared by the engine and the annotation processor.
 */
public final class Durations {

    private static final Pattern SIMPLE = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    private Durations() {
    }

    /**
     * @param text the text to parse
     * @param what what it is, for the message ({@code "ttl of OrderService.createOrder"})
     * @throws IllegalArgumentException naming {@code what} and the text, if it does not parse or is not positive
     */
    public static Duration parse(String text, String what) {
        String trimmed = text == null ? "" : text.trim();
        Duration d;
        Matcher m = SIMPLE.matcher(trimmed);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        } else {
            try {
                d = Duration.parse(trimmed);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException(what + ": '" + text
                        + "' is not a duration; write 500ms, 30s, 15m, 24h, 7d or ISO-8601 such as PT24H");
            }
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + ": '" + text + "' must be a positive duration");
        }
        return d;
    }
}
