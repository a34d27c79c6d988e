package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Keys of several parts through the programmatic API: one key text from one list of parts only. */
class KeyPartsTest {

    private final IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
    private final IdempotentOperation<String> ship = IdempotentOperation
            .builder("Shipments.ship", Tier.REVERSIBLE, ResultType.of(String.class)).build();
    private final AtomicInteger runs = new AtomicInteger();

    private String ship(String a, String b) {
        return executor.execute(ship, KeyParts.of("A", a, b), new Object[0], () -> "ran " + runs.incrementAndGet());
    }

    @Test
    void partsThatAJoinWouldRunTogetherAreTwoKeysAndTwoExecutions() {
        assertThat(ship("x:y", "z")).isEqualTo("ran 1");
        assertThat(ship("x", "y:z")).isEqualTo("ran 2");
        assertThat(ship("x:y", "z")).as("the same parts again replay").isEqualTo("ran 1");
        assertThat(runs).hasValue(2);
    }

    @Test
    void eachPartIsEscapedAndThePartsJoinedWithAColon() {
        assertThat(KeyParts.of("ORDER", "A-1", 3L)).isEqualTo("ORDER:A-1:3");
        assertThat(KeyParts.of("A", "x:y", "z")).isEqualTo("A:x\\:y:z");
        assertThat(KeyParts.of("A", "x", "y:z")).isEqualTo("A:x:y\\:z");
        // a backslash is escaped too, or ("x\", "y") and ("x\:y") would meet
        assertThat(KeyParts.of("x\\", "y")).isEqualTo("x\\\\:y");
        assertThat(KeyParts.of("x\\:y")).isEqualTo("x\\\\\\:y");
        assertThat(KeyParts.of("only")).isEqualTo("only");
    }

    @Test
    void aMissingOrIdentityPartIsRefusedNamingItsPosition() {
        assertThatThrownBy(() -> KeyParts.of("A", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key part 2 is null");
        assertThatThrownBy(() -> KeyParts.of("A", "")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("key part 2 is empty");
        assertThatThrownBy(() -> KeyParts.of("A", new Object())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("key part 2 is a java.lang.Object, which has no toString() of its own");
        assertThatThrownBy(() -> KeyParts.of("A", (Object) new int[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("key part 2 is a int[]");
        assertThatThrownBy(KeyParts::of).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a key needs at least one part");
    }
}
