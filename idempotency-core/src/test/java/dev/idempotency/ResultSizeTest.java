package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.internal.Keys;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A result larger than its operation records (issue 16, item 2) fails the call before anything is recorded, exactly
 * as a result that cannot be encoded: never a row the database refuses after the method ran.
 */
class ResultSizeTest {

    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final List<Outcome> outcomes = new ArrayList<>();
    final AtomicInteger runs = new AtomicInteger();
    final IdempotentExecutor executor = IdempotentExecutor.builder(store)
            .listener(e -> outcomes.add(e.outcome())).build();

    private String produce(int chars) {
        runs.incrementAndGet();
        return "x".repeat(chars);
    }

    @Test
    void theDefaultIsOneMebibyteAndALargerResultIsRefusedAndReleasedForAReversibleCall() {
        IdempotentOperation<String> op = IdempotentOperation
                .builder("Reports.render", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        assertThat(op.maxResultBytes()).isEqualTo(1 << 20).isEqualTo(IdempotentOperation.DEFAULT_MAX_RESULT_BYTES);

        // 17 MB: MariaDB's max_allowed_packet would refuse the row after the method ran
        assertThatThrownBy(() -> executor.execute(op, "R-1", new Object[0], () -> produce(17_000_000)))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Reports.render")
                .hasMessageContaining("17000002 bytes")
                .hasMessageContaining("1048576")
                .hasMessageContaining("maxResultBytes");
        assertThat(store.find(Keys.hash("Reports.render", "", "R-1"))).as("released, nothing recorded").isEmpty();
        assertThat(outcomes).containsExactly(Outcome.FAILED);

        // the retry runs again at once (no lock to wait out), and a result within the limit is recorded
        assertThat(executor.execute(op, "R-1", new Object[0], () -> produce(1_048_574))).hasSize(1_048_574);
        assertThat(runs).hasValue(2);
        assertThat(store.find(Keys.hash("Reports.render", "", "R-1")).orElseThrow().status())
                .isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    @Test
    void theLimitIsPerOperationAndCountsEncodedBytes() {
        IdempotentOperation<String> small = IdempotentOperation
                .builder("Labels.print", Tier.REVERSIBLE, ResultType.of(String.class)).maxResultBytes(10).build();
        // "12345678" is 10 bytes of JSON with its quotes: accepted; one more character is refused
        assertThat(executor.execute(small, "L-1", new Object[0], () -> "12345678")).isEqualTo("12345678");
        assertThatThrownBy(() -> executor.execute(small, "L-2", new Object[0], () -> "123456789"))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("11 bytes");
    }

    @Test
    void anIrreversibleCallWithAnOversizedResultIsHeldForReviewNotReleased() {
        IdempotentOperation<String> op = IdempotentOperation
                .builder("Payouts.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).maxResultBytes(100).build();
        assertThatThrownBy(() -> executor.execute(op, "P-1", new Object[0], () -> produce(200)))
                .isInstanceOf(IdempotencyReplayException.class);
        assertThat(store.find(Keys.hash("Payouts.send", "", "P-1")).orElseThrow().status())
                .isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);
        assertThatThrownBy(() -> executor.execute(op, "P-1", new Object[0], () -> produce(1)))
                .isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    void theLimitMustBePositive() {
        assertThatThrownBy(() -> IdempotentOperation
                .builder("Op", Tier.REVERSIBLE, ResultType.of(String.class)).maxResultBytes(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxResultBytes of Op");
    }
}
