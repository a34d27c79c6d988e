package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Settling.Ending;
import dev.idempotency.Settling.Settlement;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The settling table of {@code docs/engine.md}, every row: what becomes of an owned claim once its call ended. The
 * whole-call tests of each row are named on that page (TierRulesTest, TransactionEdgesTest, FailurePathsTest).
 */
class SettlingTest {

    @ParameterizedTest(name = "{0}, may have acted {1}, {2} -> {3}")
    @CsvSource(textBlock = """
            # tier,       mayHaveActed, ending,         settlement
            REVERSIBLE,   true,         OUTCOME,        RECORD
            REVERSIBLE,   false,        OUTCOME,        RECORD
            IRREVERSIBLE, true,         OUTCOME,        RECORD
            IRREVERSIBLE, false,        OUTCOME,        RECORD
            REVERSIBLE,   true,         FAILED,         RELEASE
            REVERSIBLE,   false,        FAILED,         RELEASE
            IRREVERSIBLE, true,         FAILED,         HOLD_FOR_REVIEW
            IRREVERSIBLE, false,        FAILED,         RELEASE
            REVERSIBLE,   true,         ROLLED_BACK,    RELEASE
            REVERSIBLE,   false,        ROLLED_BACK,    RELEASE
            IRREVERSIBLE, true,         ROLLED_BACK,    HOLD_FOR_REVIEW
            IRREVERSIBLE, false,        ROLLED_BACK,    RELEASE
            REVERSIBLE,   true,         COMMIT_UNKNOWN, LEAVE_IN_FLIGHT
            REVERSIBLE,   false,        COMMIT_UNKNOWN, RELEASE
            IRREVERSIBLE, true,         COMMIT_UNKNOWN, HOLD_FOR_REVIEW
            IRREVERSIBLE, false,        COMMIT_UNKNOWN, RELEASE
            """)
    void settlesEveryRowOfTheTable(Tier tier, boolean mayHaveActed, Ending ending, Settlement expected) {
        assertThat(Settling.settle(tier, mayHaveActed, ending)).isEqualTo(expected);
    }

    /** READ_ONLY calls never claim (the executor runs them bare); were one settled, it would be as reversible. */
    @ParameterizedTest
    @EnumSource(Ending.class)
    void readOnlySettlesAsReversible(Ending ending) {
        for (boolean mayHaveActed : new boolean[] {true, false}) {
            assertThat(Settling.settle(Tier.READ_ONLY, mayHaveActed, ending))
                    .isEqualTo(Settling.settle(Tier.REVERSIBLE, mayHaveActed, ending));
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(textBlock = """
            COMMITTED,   OUTCOME
            ROLLED_BACK, ROLLED_BACK
            UNKNOWN,     COMMIT_UNKNOWN
            """)
    void aTransactionsCompletionIsAnEnding(TransactionBridge.Completion completion, Ending expected) {
        assertThat(Ending.of(completion)).isEqualTo(expected);
    }
}
