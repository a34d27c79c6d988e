package dev.idempotency.aspectj;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The aspect woven at compile time into a plain class, configured by hand as an application without Spring does: every
 * execution of an {@code @Idempotent} method is guarded once, whatever its visibility and however it is called.
 */
class PlainJavaWeavingTest {

    private final CountingStore store = new CountingStore(new InMemoryIdempotencyStore());
    private final Shop shop = new Shop();
    private final String id = UUID.randomUUID().toString();

    private void configure() {
        WovenIdempotentAspect.configure(IdempotentExecutor.builder(store).build());
    }

    @AfterEach
    void reset() {
        WovenIdempotentAspect.reset();
    }

    @Test
    void theClassIsWovenByTheCompiler() {
        assertThat(java.util.Arrays.stream(Shop.class.getDeclaredFields()).map(java.lang.reflect.Field::getName))
                .anyMatch(name -> name.startsWith("ajc$"));
    }

    @Test
    void aCallBeforeTheAspectIsConfiguredFailsNamingTheMethodAndDoesNotRun() {
        WovenIdempotentAspect.reset();

        assertThatThrownBy(() -> shop.checkout(id))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Shop.placeOrder(String, int)")
                .hasMessageContaining("WovenIdempotentAspect.configure(executor)");
        assertThat(shop.runs).hasValue(0);
        assertThat(WovenIdempotentAspect.isConfigured()).isFalse();
    }

    @Test
    void aKeyOfPartsKeepsPartsThatAJoinWouldRunTogetherApart() {
        configure();

        assertThat(shop.pack("x:y", "z")).isEqualTo("packed 1");
        assertThat(shop.pack("x", "y:z")).as("another key: a join would have made both PACK:x:y:z")
                .isEqualTo("packed 2");
        assertThat(shop.pack("x:y", "z")).isEqualTo("packed 1");
    }

    @Test
    void aSelfInvocationIsGuarded() {
        configure();

        String first = shop.checkout(id);
        String second = shop.checkout(id);

        assertThat(second).isEqualTo(first).isEqualTo("order 1 of " + id + " (2 items)");
        assertThat(shop.runs).hasValue(1);
        assertThat(store.claims).hasValue(2);
    }

    @Test
    void aSelfInvocationAndACallFromOutsideShareOneKeyAndOneFingerprint() {
        configure();

        String inside = shop.checkout(id);
        String outside = shop.placeOrder(id, 2);

        assertThat(outside).isEqualTo(inside);
        assertThatThrownBy(() -> shop.placeOrder(id, 3)).isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("Shop.placeOrder");
        assertThat(shop.runs).hasValue(1);
    }

    @Test
    void privateProtectedAndStaticMethodsAreGuarded() {
        configure();
        int staticRuns = Shop.staticRuns.get();

        assertThat(shop.payPrivately(id)).isEqualTo(shop.payPrivately(id));
        assertThat(shop.shipProtected(id)).isEqualTo(shop.shipProtected(id));
        assertThat(Shop.invoice(id)).isEqualTo(Shop.invoice(id));

        assertThat(shop.runs).hasValue(2);
        assertThat(Shop.staticRuns.get() - staticRuns).isEqualTo(1);
        assertThat(store.claims).hasValue(6);
    }

    @Test
    void readOnlyMethodsAreNotWovenAndNeverReachTheStore() {
        // not configured at all: a READ_ONLY method never asks the aspect
        assertThat(shop.browse("SKU-1")).isEqualTo("SKU-1 read 1");
        assertThat(shop.browse("SKU-1")).isEqualTo("SKU-1 read 2");
        assertThat(store.claims).hasValue(0);
    }

    @Test
    void aNewConfigurationReplacesTheExecutor() {
        configure();
        shop.checkout(id);
        CountingStore other = new CountingStore(new InMemoryIdempotencyStore());
        WovenIdempotentAspect.configure(IdempotentExecutor.builder(other).build());

        shop.checkout(id);

        assertThat(other.claims).hasValue(1);
        assertThat(shop.runs).hasValue(2);
    }
}
