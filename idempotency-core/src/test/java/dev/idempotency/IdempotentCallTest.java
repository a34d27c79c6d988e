package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent.Outcome;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The publication table of {@code docs/engine.md} ("Settling"): what a call whose outcome waited for the caller's
 * transaction publishes once that transaction ended. The whole-call tests are named on that page.
 */
class IdempotentCallTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(textBlock = """
            # completion, published
            COMMITTED,    EXECUTED
            ROLLED_BACK,  ROLLED_BACK
            UNKNOWN,      OUTCOME_UNKNOWN
            """)
    void anOutcomeThatWaitedIsPublishedAsItsTransactionEnded(TransactionBridge.Completion completion,
            Outcome expected) {
        assertThat(IdempotentCall.published(completion)).isEqualTo(expected);
    }
}
