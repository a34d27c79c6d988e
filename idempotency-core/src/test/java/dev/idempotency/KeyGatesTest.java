package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The gate of each key on this node: its own callers, one turn at a time, gone with its last caller. */
class KeyGatesTest {

    private final KeyGates gates = new KeyGates(8);

    @Test
    void keysWhoseHashCodesCollideHaveGatesOfTheirOwn() {
        byte[] a = {0, 31};
        byte[] b = {1, 0};
        assertThat(Arrays.hashCode(a)).isEqualTo(Arrays.hashCode(b));
        try (KeyGates.Entry entry = gates.enter(a)) {
            assertThat(entry).isNotNull();
            assertThat(gates.callers(a)).isEqualTo(1);
            assertThat(gates.callers(b)).isZero();
        }
    }

    @Test
    void aSecondCallerOfTheKeyDoesNotGetTheTurnTheFirstHolds() throws Exception {
        byte[] key = {7, 7, 7};
        try (KeyGates.Entry first = gates.enter(key)) {
            assertThat(first.awaitTurn(0)).isTrue();
            boolean second = CompletableFuture.supplyAsync(() -> {
                try (KeyGates.Entry other = gates.enter(key)) {
                    return other.awaitTurn(TimeUnit.MILLISECONDS.toNanos(20));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }).get(10, TimeUnit.SECONDS);
            assertThat(second).isFalse();
        }
        assertThat(gates.callers(key)).isZero();
    }

    @Test
    void theGateKeepsItsCallersCountAndLeavesWithTheLast() {
        byte[] key = {1, 2, 3};
        KeyGates.Entry first = gates.enter(key);
        KeyGates.Entry second = gates.enter(key);
        assertThat(gates.callers(key)).isEqualTo(2);
        second.close();
        assertThat(gates.callers(key)).isEqualTo(1);
        first.close();
        assertThat(gates.callers(key)).isZero();
    }
}
