package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * MySQL and MariaDB bind an instant as the text of its UTC {@code DATETIME} literal, made by hand: it must be the
 * literal MariaDB Connector/J writes for the instant's UTC {@link LocalDateTime} (its {@code TIMESTAMP_FORMAT}, or
 * without the fraction when there is none), so that the server reads the same value as before.
 */
class MySqlTimestampTest {

    private static final DateTimeFormatter WITH_FRACTION = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");
    private static final DateTimeFormatter WHOLE_SECONDS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private static String driversLiteral(Instant instant) {
        LocalDateTime t = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
        return t.format(t.getNano() != 0 ? WITH_FRACTION : WHOLE_SECONDS);
    }

    @Test
    void theLiteralIsTheDriversForLocalDateTime() {
        Instant[] samples = {Instant.EPOCH, Instant.parse("2026-12-01T16:33:14.123Z"),
            Instant.parse("2026-12-01T16:33:14Z"), Instant.parse("2000-02-29T23:59:59.999Z"),
            Instant.parse("1969-12-31T23:59:59.001Z"), Instant.parse("0001-01-01T00:00:00Z"),
            Instant.parse("9999-12-31T23:59:59.999999999Z"), Instant.parse("2026-01-09T08:07:06.000001Z"),
            Instant.parse("2026-01-09T08:07:06.000000999Z")};
        for (Instant instant : samples) {
            assertThat(JdbcDialect.mysql().timestamp(instant)).as("%s", instant).isEqualTo(driversLiteral(instant));
            assertThat(JdbcDialect.mariadb().timestamp(instant)).as("%s", instant).isEqualTo(driversLiteral(instant));
        }
        SplittableRandom random = new SplittableRandom(42);
        long max = Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli();
        for (int i = 0; i < 10_000; i++) {
            Instant instant = Instant.ofEpochMilli(random.nextLong(-62_135_596_800_000L, max));
            assertThat(JdbcDialect.mysql().timestamp(instant)).as("%s", instant).isEqualTo(driversLiteral(instant));
        }
    }

    @Test
    void aYearNoDatetimeHoldsStaysALocalDateTimeForTheDriverAndServerToRefuse() {
        Instant late = Instant.parse("+10000-01-01T00:00:00Z");
        Instant early = Instant.parse("0000-12-31T23:59:59Z");
        assertThat(JdbcDialect.mysql().timestamp(late)).isEqualTo(LocalDateTime.ofInstant(late, ZoneOffset.UTC));
        assertThat(JdbcDialect.mysql().timestamp(early)).isEqualTo(LocalDateTime.ofInstant(early, ZoneOffset.UTC));
    }
}
