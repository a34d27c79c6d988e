package dev.idempotency.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Every method of the SPI, the reports included, reaches the delegate with the caller's arguments and returns the
 * delegate's answer. A method added to {@link IdempotencyStore} and not forwarded fails here: a decorator would
 * otherwise inherit the SPI's default, which refuses, instead of its store's answer.
 */
class ForwardingIdempotencyStoreTest {

    /** The delegate's last call, and what it answered. */
    private Method called;
    private Object[] calledWith;
    private Object answered;
    private boolean booleanAnswer;

    private final IdempotencyStore delegate = (IdempotencyStore) Proxy.newProxyInstance(
            IdempotencyStore.class.getClassLoader(), new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                called = method;
                calledWith = args == null ? new Object[0] : args;
                answered = answerFor(method.getReturnType());
                return answered;
            });

    private final ForwardingIdempotencyStore store = new ForwardingIdempotencyStore(delegate) { };

    @Test
    void everyMethodOfTheSpiReachesTheDelegateAndReturnsItsAnswer() throws Exception {
        assertForwardsEverything(store);
    }

    /**
     * A closed circuit breaker changes no answer: a lease renewed or not, a release or a review mark refused, the
     * record found, the purge count, each reaches the executor as the store gave it.
     */
    @Test
    void aClosedCircuitBreakerReturnsEveryAnswerOfItsStore() throws Exception {
        CircuitBreakerStore breaker = CircuitBreakerStore.wrap(delegate).build();
        assertForwardsEverything(breaker);
        assertThat(breaker.state()).isEqualTo(CircuitBreakerStore.State.CLOSED);
        assertThat(breaker.openings()).isZero();
    }

    private void assertForwardsEverything(IdempotencyStore decorator) throws Exception {
        List<String> checked = new ArrayList<>();
        for (Method m : IdempotencyStore.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            for (boolean b : new boolean[] {true, false}) {
                booleanAnswer = b;
                called = null;
                Object[] args = argumentsFor(m);
                Object result = invoke(decorator, m, args);
                assertThat(called).as("%s reaches the delegate", m).isEqualTo(m);
                assertThat(calledWith).as("%s passes the caller's arguments", m).containsExactly(args);
                if (m.getReturnType().isPrimitive()) {
                    assertThat(result).as("%s returns the delegate's answer", m).isEqualTo(answered);
                } else {
                    assertThat(result).as("%s returns the delegate's answer", m).isSameAs(answered);
                }
            }
            checked.add(m.getName());
        }
        assertThat(checked).contains("claim", "takeOver", "complete", "renew", "release", "find", "markNeedsReview",
                "markNeedsReviewIfStale", "resolve", "purgeExpired", "backlog", "listNeedsReview", "listStuck");
    }

    @Test
    void theDelegateIsTheOneGivenAndMustExist() {
        assertThat(store.delegate()).isSameAs(delegate);
        assertThatNullPointerException()
                .isThrownBy(() -> new ForwardingIdempotencyStore(null) { })
                .withMessageContaining("delegate");
    }

    private static Object invoke(IdempotencyStore decorator, Method m, Object[] args) throws Exception {
        try {
            return m.invoke(decorator, args);
        } catch (InvocationTargetException e) {
            throw new AssertionError(m + " threw instead of forwarding", e.getCause());
        }
    }

    private Object answerFor(Class<?> type) {
        if (type == boolean.class) {
            return booleanAnswer;
        }
        if (type == int.class) {
            return booleanAnswer ? 42 : -7;
        }
        if (type == ClaimResult.class) {
            return ClaimResult.acquired(booleanAnswer);
        }
        if (type == Optional.class) {
            return Optional.of(new Object());
        }
        if (type == List.class) {
            return List.of(Backlog.empty("op"));
        }
        if (type == void.class) {
            return null;
        }
        throw new AssertionError("no answer for " + type + ": extend this test for the new SPI method");
    }

    private static Object[] argumentsFor(Method m) {
        return Arrays.stream(m.getParameterTypes()).map(ForwardingIdempotencyStoreTest::argumentFor).toArray();
    }

    private static Object argumentFor(Class<?> type) {
        if (type == byte[].class) {
            return new byte[] {1, 2, 3};
        }
        if (type == Instant.class) {
            return Instant.ofEpochSecond(1_700_000_000L + System.nanoTime() % 1000);
        }
        if (type == int.class) {
            return 17;
        }
        if (type == ClaimRequest.class || type == IdempotencyRecord.class) {
            return null; // passed through untouched: the delegate is a recorder
        }
        throw new AssertionError("no argument for " + type + ": extend this test for the new SPI method");
    }
}
