package dev.idempotency.sample.order;

import java.time.Duration;

/**
 * The clocks of the story.
 *
 * @param clientTimeout  how long the HTTP client waits for an answer (500 ms)
 * @param processingTime how long the order service needs (800 ms)
 * @param httpBackoff    first backoff of the HTTP client (doubles per retry; Spring's jitter of half as much)
 * @param gatewayBackoff first backoff of the API gateway
 * @param toolBackoff    first backoff of the agent's tool call
 */
record Timings(Duration clientTimeout, Duration processingTime, Duration httpBackoff, Duration gatewayBackoff,
        Duration toolBackoff) {

    /** The story as told: a 500 ms client against an 800 ms service. */
    static final Timings STORY = new Timings(Duration.ofMillis(500), Duration.ofMillis(800), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(200));

    /** Every duration multiplied by {@code factor} (tests run the story faster). */
    Timings scaled(double factor) {
        return new Timings(scale(clientTimeout, factor), scale(processingTime, factor), scale(httpBackoff, factor),
                scale(gatewayBackoff, factor), scale(toolBackoff, factor));
    }

    private static Duration scale(Duration d, double factor) {
        return Duration.ofNanos(Math.max(1_000_000L, (long) (d.toNanos() * factor)));
    }
}
