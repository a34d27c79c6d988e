package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class IdempotencyKeyHeaderTest {

    @Test
    void anSfStringAndItsEscapesRoundTrip() {
        String key = "a \"quoted\" \\ key";

        assertThat(IdempotencyKeyHeader.format(key)).isEqualTo("\"a \\\"quoted\\\" \\\\ key\"");
        assertThat(IdempotencyKeyHeader.parse(IdempotencyKeyHeader.format(key), 255)).isEqualTo(key);
    }

    @Test
    void aBareTokenIsItsOwnKey() {
        assertThat(IdempotencyKeyHeader.parse(" 8e03978e-40d5-43e8-bc93-6894a57f9324 ", 255))
                .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
    }

    @Test
    void whatIsNotOneKeyIsRefusedWithoutEchoingIt() {
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.parse("\"bad\\n\"", 255))
                .withMessageContaining("backslash");
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.parse("\"k\u00e9\"", 255))
                .withMessageContaining("printable ASCII");
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.parse("\"a\", \"b\"", 255))
                .withMessageContaining("more than one");
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.parse("   ", 255))
                .withMessageContaining("empty");
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.parse("abcd", 3))
                .withMessage("the key has 4 characters, more than 3");
        assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeyHeader.format("k\u00e9"));
    }
}
