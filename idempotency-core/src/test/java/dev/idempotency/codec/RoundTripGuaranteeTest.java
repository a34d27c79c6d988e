package dev.idempotency.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.ResultType;
import java.lang.reflect.Type;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the codec records must replay (issue 16, items 4 and 6): a declared type whose values could not come back
 * equal is refused when the method is first seen ({@code checkReplayable}), and a value that Jackson would write but
 * refuse to read is refused when it is encoded, before anything is stored.
 */
class RoundTripGuaranteeTest {

    final JacksonResultCodec codec = JacksonResultCodec.create();

    /** Counts its static initializer: a replay must never be able to run it. */
    public static final class Gadget {
        static int initialized;

        static {
            initialized++;
        }
    }

    public record Holder(String name, Class<?> type) {
    }

    public record Deep(String id, List<Optional<Middle>> middles) {
    }

    public record Middle(Map<String, Holder[]> holders) {
    }

    public record WithMember(String name, java.lang.reflect.Method method) {
    }

    public record Loose(String id, Object payload) {
    }

    public record LooseMap(String id, Map<String, Object> attributes) {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
    public record Typed(String id) {
    }

    public record HoldsTyped(Typed typed) {
    }

    /** A field Jackson never writes is not a property: it does not make a type unreplayable. */
    public static final class HiddenInternals {
        public String id = "a";
        @JsonIgnore
        public Object lock = new Object();
        private Class<?> cache;

        public Class<?> cache() {
            return cache;
        }
    }

    public record Big(BigInteger value) {
    }

    public record Named(Map<String, Integer> counts) {
    }

    /** A codec on a mapper that reads with these limits. */
    private static JacksonResultCodec reading(StreamReadConstraints limits) {
        return JacksonResultCodec.using(JsonMapper.builder(JsonFactory.builder().streamReadConstraints(limits).build())
                .build());
    }

    @Test
    void aClassTypedPropertyIsRefusedWhenTheMethodIsFirstSeenNamingTheProperty() {
        assertThatThrownBy(() -> codec.checkReplayable(Holder.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Holder.type")
                .hasMessageContaining("java.lang.Class");
        assertThatThrownBy(() -> codec.checkReplayable(WithMember.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("WithMember.method");
    }

    @Test
    void theRulesReachEveryPropertyAtEveryDepth() {
        assertThatThrownBy(() -> codec.checkReplayable(Deep.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Deep.middles.holders[].type")
                .hasMessageContaining("a stored row would name a class to load");
        assertThatThrownBy(() -> codec.checkReplayable(new ResultType<List<Map<String, Holder>>>() { }.type()))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Holder.type");
    }

    @Test
    void aTamperedRowCannotRunAStaticInitializerThroughAClassProperty() {
        int before = Gadget.initialized;
        assertThatThrownBy(() -> codec.checkReplayable(Holder.class)).isInstanceOf(IdempotencyReplayException.class);
        // the refusal is by declared type: decoding is never reached, and nothing is initialized by looking
        assertThat(Gadget.initialized).isEqualTo(before);
    }

    @Test
    void anObjectPropertyIsRefusedBecauseItWouldReplayAsAMap() {
        assertThatThrownBy(() -> codec.checkReplayable(Loose.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Loose.payload")
                .hasMessageContaining("JsonNode");
        assertThatThrownBy(() -> codec.checkReplayable(LooseMap.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("LooseMap.attributes");
    }

    @Test
    void aConcreteClassCarryingJsonTypeInfoIsRefusedFirstUnlessItIsAllowListed() {
        assertThatThrownBy(() -> codec.checkReplayable(Typed.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("@JsonTypeInfo")
                .hasMessageContaining("allowSubtypes(Typed.class)");
        assertThatThrownBy(() -> codec.checkReplayable(HoldsTyped.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("HoldsTyped.typed");
        // control: the same encode fails at every call without the first-seen check
        assertThatThrownBy(() -> codec.encode(new Typed("x"), Typed.class))
                .isInstanceOf(IdempotencyReplayException.class);

        JacksonResultCodec listed = JacksonResultCodec.builder().allowSubtypes(Typed.class).build();
        assertThatCode(() -> listed.checkReplayable(HoldsTyped.class)).doesNotThrowAnyException();
        HoldsTyped value = new HoldsTyped(new Typed("x"));
        assertThat(listed.decode(listed.encode(value, HoldsTyped.class), HoldsTyped.class)).isEqualTo(value);
    }

    @Test
    void onlyThePropertiesJacksonWritesCount() {
        assertThatCode(() -> codec.checkReplayable(HiddenInternals.class)).doesNotThrowAnyException();
    }

    @Test
    void aNumberLongerThanJacksonReadsIsRefusedWhenEncodedNotAtEveryReplay() {
        Big ok = new Big(new BigInteger("9".repeat(1000)));
        assertThat(codec.decode(codec.encode(ok, Big.class), Big.class)).isEqualTo(ok);

        Big tooLong = new Big(new BigInteger("9".repeat(1501)));
        assertThatThrownBy(() -> codec.encode(tooLong, Big.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("would not replay")
                .hasMessageContaining("Number value length");
    }

    @Test
    void aPropertyNameLongerThanJacksonReadsIsRefusedWhenEncoded() {
        Named tooLong = new Named(Map.of("k".repeat(60_000), 1));
        assertThatThrownBy(() -> codec.encode(tooLong, Named.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Name length");
    }

    public record Node(String id, List<Node> children) {
    }

    @Test
    void nestingDeeperThanTheMapperReadsIsRefusedWhenEncoded() {
        JacksonResultCodec own = reading(StreamReadConstraints.builder().maxNestingDepth(12).build());
        Node node = new Node("leaf", List.of());
        for (int i = 0; i < 5; i++) {
            node = new Node("n" + i, List.of(node));   // two levels (object, array) per node
        }
        Node fine = node;
        assertThat(own.decode(own.encode(fine, Node.class), Node.class)).isEqualTo(fine);
        for (int i = 0; i < 200; i++) {
            node = new Node("n" + i, List.of(node));   // longer than the depth of 12 once written as bytes
        }
        Node deep = node;
        assertThatThrownBy(() -> own.encode(deep, Node.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("nesting depth");
    }

    @Test
    void theApplicationMappersOwnReadLimitsApplyToo() {
        JacksonResultCodec own = reading(StreamReadConstraints.builder().maxNumberLength(20).build());
        Big fine = new Big(new BigInteger("9".repeat(20)));
        assertThat(own.decode(own.encode(fine, Big.class), Big.class)).isEqualTo(fine);
        assertThatThrownBy(() -> own.encode(new Big(new BigInteger("9".repeat(21))), Big.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("(21)");
    }

    @Test
    void aStringLimitOfTheMapperAppliesToWhatIsRecorded() {
        JacksonResultCodec strings = reading(StreamReadConstraints.builder().maxStringLength(5).build());
        assertThat(strings.decode(strings.encode("12345", String.class), String.class)).isEqualTo("12345");
        assertThatThrownBy(() -> strings.encode("123456", String.class))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("String value length");
    }

    @Test
    void aTokenCountLimitOfTheMapperAppliesEvenToASmallResult() {
        JacksonResultCodec own = reading(StreamReadConstraints.builder().maxTokenCount(6).build());
        Type ints = new ResultType<List<Integer>>() { }.type();
        assertThat(own.decode(own.encode(List.of(1, 2, 3, 4), ints), ints)).isEqualTo(List.of(1, 2, 3, 4));
        // seven tokens in 11 bytes: far below every length limit, still more than the mapper reads
        assertThatThrownBy(() -> own.encode(List.of(1, 2, 3, 4, 5), ints))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("would not replay")
                .hasMessageContaining("Token count");
    }

    @Test
    void aDocumentLengthLimitOfTheMapperAppliesEvenToASmallResult() {
        JacksonResultCodec own = reading(StreamReadConstraints.builder().maxDocumentLength(10).build());
        assertThat(own.decode(own.encode("12345678", String.class), String.class)).isEqualTo("12345678");
        assertThatThrownBy(() -> own.encode("1234567890", String.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("would not replay")
                .hasMessageContaining("Document length");
    }

    static <T> List<T> generic() {
        return null;
    }

    static <T> T[] genericArray() {
        return null;
    }

    static <T> List<? extends T> wildcard() {
        return null;
    }

    @Test
    void anUnresolvedTypeVariableAnywhereInTheDeclaredTypeIsNamed() throws Exception {
        for (String method : new String[] {"generic", "genericArray", "wildcard"}) {
            java.lang.reflect.Type type = RoundTripGuaranteeTest.class.getDeclaredMethod(method)
                    .getGenericReturnType();
            assertThatThrownBy(() -> codec.checkReplayable(type)).as(method)
                    .isInstanceOf(IdempotencyReplayException.class)
                    .hasMessageContaining("the type variable T is not resolved");
        }
    }
}
