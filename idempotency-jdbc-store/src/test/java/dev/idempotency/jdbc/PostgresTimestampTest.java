package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL binds an instant as its ISO-8601 text, made by hand: it must be exactly {@link Instant#toString()}, the
 * text the server has always been given, for every instant of the years 1-9999 (fractions of 3, 6 and 9 digits, and
 * none).
 */
class PostgresTimestampTest {

    private static String isoText(Instant instant) {
        return PostgresDialect.isoText(instant.getEpochSecond(), instant.getNano());
    }

    @Test
    void theTextIsInstantToString() {
        Instant[] samples = {Instant.EPOCH, Instant.parse("2026-12-01T16:33:14.123Z"),
            Instant.parse("2026-12-01T16:33:14Z"), Instant.parse("2000-02-29T23:59:59.999Z"),
            Instant.parse("1969-12-31T23:59:59.001Z"), Instant.parse("0001-01-01T00:00:00Z"),
            Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("2026-01-09T08:07:06.000001Z"),
            Instant.parse("2026-01-09T08:07:06.000000999Z"), Instant.parse("2026-01-09T08:07:06.100Z"),
            Instant.parse("2026-01-09T08:07:06.120Z"), Instant.parse("2026-01-09T08:07:06.123400Z"),
            Instant.parse("1900-03-01T00:00:00.5Z")};
        for (Instant instant : samples) {
            assertThat(isoText(instant)).as("%s", instant).isEqualTo(instant.toString());
        }
        SplittableRandom random = new SplittableRandom(42);
        long first = Instant.parse("0001-01-01T00:00:00Z").getEpochSecond();
        long last = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        for (int i = 0; i < 30_000; i++) {
            long second = random.nextLong(first, last + 1);
            int nano = switch (i % 4) {
                case 0 -> 0;
                case 1 -> random.nextInt(1000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1000;
                default -> random.nextInt(1_000_000_000);
            };
            Instant instant = Instant.ofEpochSecond(second, nano);
            assertThat(isoText(instant)).as("%s", instant).isEqualTo(instant.toString());
        }
    }
}
