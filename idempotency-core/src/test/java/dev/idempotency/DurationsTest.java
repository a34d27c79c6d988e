package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.internal.Durations;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({"500ms,PT0.5S", "30s,PT30S", "15m,PT15M", "24h,PT24H", "7d,PT168H", "PT24H,PT24H", "P7D,PT168H",
            "' 10s ',PT10S"})
    void parsesTheShortFormsAndIso(String text, String iso) {
        assertThat(Durations.parse(text, "ttl")).isEqualTo(Duration.parse(iso));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "24", "1 day", "10x", "-5s", "0s", "PT0S", "h"})
    void refusesWhatDoesNotParseNamingWhatAndText(String text) {
        assertThatThrownBy(() -> Durations.parse(text, "ttl of Orders.create"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ttl of Orders.create")
                .hasMessageContaining("'" + text + "'");
    }
}
