package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.spring.HostileKeys.Customer;
import dev.idempotency.spring.HostileKeys.Request;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

/**
 * Key expressions through the aspect: what works, what is refused, what fails. Whatever is refused or fails, the
 * method did not run and the store was not touched.
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

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("typeReference", "T(java.lang.Runtime).getRuntime().availableProcessors()",
                        "type references", (Function<HostileKeys, String>) h -> h.typeReference(request())),
                Arguments.of("constructor", "new java.io.File('x').getName()", "constructors",
                        (Function<HostileKeys, String>) h -> h.constructor(request())),
                Arguments.of("beanReference", "@orderService.toString()", "bean references",
                        (Function<HostileKeys, String>) h -> h.beanReference(request())),
                Arguments.of("misspelledParameter", "#requets.customerId", "#requets is not a parameter",
                        (Function<HostileKeys, String>) h -> h.misspelledParameter(request())),
                Arguments.of("unparsable", "'unclosed", "does not parse",
                        (Function<HostileKeys, String>) h -> h.unparsable("x")),
                Arguments.of("noKey", "", "the key expression is blank",
                        (Function<HostileKeys, String>) h -> h.noKey("x")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void anExpressionReachingBeyondTheArgumentsIsRefused(String method, String expression, String reason,
            Function<HostileKeys, String> call) {
        assertThatThrownBy(() -> call.apply(hostile))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("HostileKeys." + method + "(")
                .hasMessageContaining("\"" + expression + "\"")
                .hasMessageContaining(reason);
        assertUntouched();
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

    @Test
    void aBadTtlIsRefusedNamingTheMethod() {
        assertThatThrownBy(() -> hostile.badTtl("x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("HostileKeys.badTtl(String)")
                .hasMessageContaining("'forever'");
        assertUntouched();
    }

    @Test
    void aCompensationThatDoesNotFitIsRefusedNamingBothMethods() {
        assertThatThrownBy(() -> hostile.missingCompensation("x"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HostileKeys.missingCompensation(String)")
                .hasMessageContaining("undo(String) or undo(String, String)")
                .hasMessageContaining("found only HostileKeys.undo(long)");
        assertUntouched();
    }

    @Test
    void aCompensationOnAnIrreversibleMethodIsRefused() {
        assertThatThrownBy(() -> hostile.irreversibleCompensation("x"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HostileKeys.irreversibleCompensation(String)")
                .hasMessageContaining("REVERSIBLE");
        assertUntouched();
    }

    private void assertUntouched() {
        assertThat(HostileKeys.runs.get()).as("the method must not run").isEqualTo(runsBefore);
        assertThat(store.calls.get()).as("the store must not be touched").isEqualTo(callsBefore);
    }
}
