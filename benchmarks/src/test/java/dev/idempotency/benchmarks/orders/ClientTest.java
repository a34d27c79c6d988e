package dev.idempotency.benchmarks.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The duplicate rate a result is labelled with is the rate the benchmark sends. */
class ClientTest {

    private static List<String> keys(int duplicates, int calls) {
        OrderBenchmark.Client client = new OrderBenchmark.Client();
        client.start(7);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            keys.add(client.next(duplicates));
        }
        return keys;
    }

    @Test
    void withoutDuplicatesEveryKeyIsNew() {
        List<String> keys = keys(0, 1000);
        assertThat(new HashSet<>(keys)).hasSize(1000);
    }

    @Test
    void halfTheCallsRepeatTheKeyJustCompleted() {
        List<String> keys = keys(50, 1000);
        assertThat(new HashSet<>(keys)).hasSize(500);
        for (int i = 1; i < keys.size(); i += 2) {
            assertThat(keys.get(i)).isEqualTo(keys.get(i - 1));
            assertThat(keys.get(i - 1)).isNotEqualTo(i > 1 ? keys.get(i - 2) : "");
        }
    }

    @Test
    void clientsOfOneTrialNeverShareKeys() {
        OrderBenchmark.Client a = new OrderBenchmark.Client();
        OrderBenchmark.Client b = new OrderBenchmark.Client();
        a.start(0);
        b.start(1);
        assertThat(a.next(0)).isNotEqualTo(b.next(0)).startsWith("k-");
    }
}
