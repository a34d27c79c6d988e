package dev.idempotency.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The duplicate share a row is labelled with is what the requests carry, and a retry goes to another node. */
class OrderRequestsTest {

    private static final List<String> THREE = List.of("http://a", "http://b", "http://c");

    private static OrderRequests requests(boolean guarded, int duplicates) {
        return new OrderRequests(HttpClient.newHttpClient(), THREE, guarded, duplicates, "ld_0-7",
                Duration.ofSeconds(1));
    }

    @Test
    void withoutDuplicatesEveryRequestHasAKeyOfItsOwn() {
        OrderRequests requests = requests(true, 0);
        Set<String> keys = new HashSet<>();
        for (long i = 0; i < 1000; i++) {
            keys.add(requests.key(i));
        }
        assertThat(keys).hasSize(1000);
        assertThat(requests.repeat(1)).isFalse();
    }

    @Test
    void withHalfDuplicatesEverySecondRequestRepeatsTheOneBeforeOnAnotherNode() {
        OrderRequests requests = requests(true, 50);
        Set<String> keys = new HashSet<>();
        for (long i = 0; i < 1000; i++) {
            keys.add(requests.key(i));
            if (i % 2 == 1) {
                assertThat(requests.key(i)).isEqualTo(requests.key(i - 1));
                assertThat(requests.node(i)).isNotEqualTo(requests.node(i - 1));
                assertThat(requests.repeat(i)).isTrue();
            } else {
                assertThat(requests.repeat(i)).isFalse();
            }
        }
        assertThat(keys).hasSize(500);
    }

    @Test
    void theUnguardedRequestsGoToTheSameMethodWithoutTheGuard() {
        assertThat(requests(true, 0).node(0)).hasToString("http://a/orders");
        assertThat(requests(false, 0).node(4)).hasToString("http://b/orders/unguarded");
    }

    @Test
    void onlyNoneOrHalfDuplicates() {
        assertThatThrownBy(() -> requests(true, 30)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("30%");
    }
}
