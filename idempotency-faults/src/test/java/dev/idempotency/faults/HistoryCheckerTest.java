package dev.idempotency.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Tier;
import dev.idempotency.faults.History.Event;
import dev.idempotency.faults.History.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The checker on hand-made histories: it must flag what the storm is there to catch, and only that. */
class HistoryCheckerTest {

    private final List<Event> events = new ArrayList<>();
    private long clock;

    private void add(String key, Type type, String value, String request) {
        events.add(new Event(clock++, "t", key, type, value, request));
    }

    private void ok(String key, String request, String value) {
        add(key, Type.INVOKE, "1 NONE", request);
        add(key, Type.OK, value, request);
    }

    @Test
    void aCleanHistoryIsValid() {
        add("pay", Type.INVOKE, "1 NONE", "r1");
        add("pay", Type.EFFECT, "a-1", null);
        add("pay", Type.OK, "a-1", "r1");
        ok("pay", "r2", "a-1");
        ok("order", "r3", "a-2");
        add("crashed", Type.INVOKE, "1 KILL_COMMIT", "r4");
        add("crashed", Type.EFFECT, "a-3", null);
        add("crashed", Type.FAIL, "killed", "r4");
        add("crashed", Type.INVOKE, "2 NONE", "r4");
        add("crashed", Type.INFO, "IdempotencyOutcomeUnknownException", "r4");

        HistoryChecker.Verdict v = HistoryChecker.check(events,
                Map.of("pay", Tier.IRREVERSIBLE, "order", Tier.REVERSIBLE, "crashed", Tier.IRREVERSIBLE),
                Map.of("order", List.of("a-2")), Set.of());

        assertThat(v.findings()).isEmpty();
        assertThat(v.valid()).isTrue();
        assertThat(v.keys()).isEqualTo(3);
    }

    @Test
    void aSecondIrreversibleEffectIsADuplicate() {
        add("pay", Type.INVOKE, "1 NONE", "r1");
        add("pay", Type.EFFECT, "a-1", null);
        add("pay", Type.OK, "a-1", "r1");
        add("pay", Type.INVOKE, "1 NONE", "r2");
        add("pay", Type.EFFECT, "a-2", null);
        add("pay", Type.OK, "a-2", "r2");

        HistoryChecker.Verdict v = HistoryChecker.check(events, Map.of("pay", Tier.IRREVERSIBLE), Map.of(),
                Set.of());

        assertThat(v.duplicatedEffects()).isEqualTo(1);
        assertThat(v.valid()).isFalse();
        assertThat(v.findings()).anyMatch(f -> f.contains("2 effects"));
    }

    @Test
    void twoCommittedReversibleRowsAreADuplicate() {
        ok("order", "r1", "a-1");
        ok("order", "r2", "a-2");

        HistoryChecker.Verdict v = HistoryChecker.check(events, Map.of("order", Tier.REVERSIBLE),
                Map.of("order", List.of("a-1", "a-2")), Set.of());

        assertThat(v.duplicatedEffects()).isEqualTo(1);
        assertThat(v.wrongAnswers()).isZero();
    }

    @Test
    void anOkWhoseEffectRolledBackIsAWrongAnswer() {
        // a ghost replay: the answer names an attempt whose row is gone
        ok("order", "r1", "a-1");
        ok("order", "r2", "a-1");

        HistoryChecker.Verdict v = HistoryChecker.check(events, Map.of("order", Tier.REVERSIBLE),
                Map.of("order", List.of("a-7")), Set.of());

        assertThat(v.wrongAnswers()).isEqualTo(2);
        assertThat(v.duplicatedEffects()).isZero();
    }

    @Test
    void anIrreversibleOkWithoutItsEffectIsAWrongAnswerAndAReversibleUnknownToo() {
        ok("pay", "r1", "a-1");
        add("order", Type.INVOKE, "1 NONE", "r2");
        add("order", Type.INFO, "IdempotencyOutcomeUnknownException", "r2");

        HistoryChecker.Verdict v = HistoryChecker.check(events,
                Map.of("pay", Tier.IRREVERSIBLE, "order", Tier.REVERSIBLE), Map.of(), Set.of());

        assertThat(v.wrongAnswers()).isEqualTo(2);
    }

    @Test
    void aClaimLeftInFlightOrARequestWithoutAnswerIsStuck() {
        ok("order", "r1", "a-1");
        add("pay", Type.INVOKE, "1 KILL_RECORD", "r2");
        add("pay", Type.EFFECT, "a-2", null);
        add("pay", Type.FAIL, "killed", "r2");
        add("pay", Type.INVOKE, "2 NONE", "r2");
        add("pay", Type.FAIL, "IdempotencyInProgressException", "r2");

        HistoryChecker.Verdict v = HistoryChecker.check(events,
                Map.of("order", Tier.REVERSIBLE, "pay", Tier.IRREVERSIBLE), Map.of("order", List.of("a-1")),
                Set.of("order"));

        assertThat(v.stuckKeys()).isEqualTo(2);
        assertThat(v.findings()).anyMatch(f -> f.contains("IN_FLIGHT")).anyMatch(f -> f.contains("no definite"));
    }
}
