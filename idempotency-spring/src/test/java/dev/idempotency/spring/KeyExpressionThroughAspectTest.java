package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.spring.HostileKeys.Customer;
import dev.idempotency.spring.HostileKeys.Request;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * Key expressions through the aspect: what works, what is refused, what fails. What can never be applied (a key
 * expression refused when it is compiled, a bad ttl, a compensation that does not fit) fails the start, every method
 * listed; what fails at a call fails before the method runs and before the store is touched.
 */
@SpringJUnitConfig(InMemoryIdempotentAspectTest.Config.class)
class KeyExpressionThroughAspectTest {

    @Autowired HostileKeys hostile;
    @Autowired RecordingStore store;

    int callsBefore;
    int runsBefore;

    @BeforeEach
    void remember() {
        callsBefore = store.calls.get();
        runsBefore = HostileKeys.runs.get();
    }

    static Request request() {
        return new Request("C-" + System.nanoTime(), null);
    }

    /** Each method of {@link MisconfiguredKeys}, and what its line of the startup failure must say. */
    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("typeReference(Request)", "\"T(java.lang.Runtime).getRuntime().availableProcessors()\"",
                        "type references"),
                Arguments.of("constructor(Request)", "\"new java.io.File('x').getName()\"", "constructors"),
                Arguments.of("beanReference(Request)", "\"@orderService.toString()\"", "bean references"),
                Arguments.of("misspelledParameter(Request)", "\"#requets.customerId\"", "#requets is not a parameter"),
                Arguments.of("unparsable(String)", "\"'unclosed\"", "does not parse"),
                Arguments.of("noKey(String)", "\"\"", "the key expression is blank"),
                Arguments.of("badTtl(String)", "ttl of MisconfiguredKeys.badTtl(String)", "'forever' is not a duration"),
                Arguments.of("missingCompensation(String)", "undo(String) or undo(String, String)",
                        "found only MisconfiguredKeys.undo(long)"),
                Arguments.of("irreversibleCompensation(String)", "compensate = \"undoIrreversible\"",
                        "needs tier = REVERSIBLE"));
    }

    /** The one context that holds {@link MisconfiguredKeys}: it fails to start, every method listed. */
    @Configuration(proxyBeanMethods = false)
    @Import({AspectTestConfiguration.class, MisconfiguredKeys.class})
    @EnableIdempotency
    static class Misconfigured {
        static final RecordingStore STORE = new RecordingStore(new InMemoryIdempotencyStore());

        @Bean
        RecordingStore idempotencyStore() {
            return STORE;
        }
    }

    private static String startupFailure;

    private static synchronized String startupFailure() {
        if (startupFailure == null) {
            Throwable thrown = catchThrowable(() -> new AnnotationConfigApplicationContext(Misconfigured.class).close());
            assertThat(thrown).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("@Idempotent is misconfigured (9 problems):");
            startupFailure = thrown.getMessage();
        }
        return startupFailure;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void whatCanNeverBeAppliedFailsTheStartNamingTheMethodAndTheCause(String method, String what, String reason) {
        assertThat(startupFailure().lines())
                .filteredOn(line -> line.startsWith(" - @Idempotent on MisconfiguredKeys." + method + " cannot be"
                        + " applied: "))
                .singleElement()
                .satisfies(line -> assertThat(line).contains(what).contains(reason));
        assertThat(Misconfigured.STORE.calls.get()).as("the store must not be touched").isZero();
    }

    static Stream<Arguments> failing() {
        return Stream.of(
                Arguments.of("reflection", "#request.getClass().getName()", "getClass()",
                        (Function<HostileKeys, String>) h -> h.reflection(request())),
                Arguments.of("unknownProperty", "#request.nope", "'nope'",
                        (Function<HostileKeys, String>) h -> h.unknownProperty(request())),
                // explode() is neither a getter nor an accessor: refused before it can run (issue 16 item 7)
                Arguments.of("throwingMethod", "#request.explode()", "may only read",
                        (Function<HostileKeys, String>) h -> h.throwingMethod(request())));
    }

    @Test
    void aNullOnThePathIsRefusedNamingTheStepBeforeTheMethodRuns() {
        assertThatThrownBy(() -> hostile.nullNavigation(request()))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("HostileKeys.nullNavigation(Request)")
                .hasMessageContaining("\"#request.customer.name\"")
                .hasMessageContaining("reads #request.customer, which is null");
        assertUntouched();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failing")
    void anExpressionThatFailsNamesTheMethodTheExpressionAndTheCause(String method, String expression,
            String cause, Function<HostileKeys, String> call) {
        assertThatThrownBy(() -> call.apply(hostile))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("HostileKeys." + method + "(Request)")
                .hasMessageContaining("\"" + expression + "\"")
                .hasMessageContaining(cause)
                .cause().isNotNull();
        assertUntouched();
    }

    @Test
    void aRecordComponentIsReachedAsAMethodAndAsAProperty() {
        Request r = new Request("C-" + System.nanoTime(), new Customer("Ada"));

        String first = hostile.recordAccessor(r);
        assertThat(hostile.recordAccessor(r)).isEqualTo(first);
        String second = hostile.recordProperty(r);
        assertThat(hostile.recordProperty(r)).isEqualTo(second);

        assertThat(HostileKeys.runs.get() - runsBefore).isEqualTo(2);
    }

    @Test
    void positionalVariablesRootArgsAndSafeNavigationWork() {
        Request r = new Request("C-" + System.nanoTime(), null);

        String first = hostile.positional(r);

        assertThat(hostile.positional(r)).isEqualTo(first);
        assertThat(HostileKeys.runs.get() - runsBefore).isEqualTo(1);
    }

    @Test
    void aKeyThatIsNotAStringIsConvertedWithToString() {
        long orderNo = System.nanoTime();

        String first = hostile.numericKey(orderNo);

        assertThat(hostile.numericKey(orderNo)).isEqualTo(first);
        assertThat(HostileKeys.runs.get() - runsBefore).isEqualTo(1);
    }

    private void assertUntouched() {
        assertThat(HostileKeys.runs.get()).as("the method must not run").isEqualTo(runsBefore);
        assertThat(store.calls.get()).as("the store must not be touched").isEqualTo(callsBefore);
    }
}
