package dev.idempotency.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.ResultType;
import java.lang.reflect.Type;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The codec's safety net, and its price: a value whose declared type holds, wherever it sits, an interface written
 * without a type id is read back before it is recorded, and refused if that fails; every other value (the common
 * case) is written once and never built again to check it.
 */
class ReadBackTest {

    /** Counts every instantiation: a result that is read back builds its records again. */
    static final AtomicInteger BUILT = new AtomicInteger();

    public record Item(String sku) {
        public Item {
            BUILT.incrementAndGet();
        }
    }

    public enum Colour { RED, BLUE }

    public record Line(Item item, int quantity, long cents, boolean gift, Colour colour) {
    }

    public record Tree(String name, List<Tree> children, Item item) {
    }

    public record Generic<T>(List<T> values, Optional<T> first) {
    }

    /** A bean written through its getters. */
    public static final class Basket {
        private final Item item;

        public Basket(@com.fasterxml.jackson.annotation.JsonProperty("item") Item item) {
            this.item = item;
        }

        public Item getItem() {
            return item;
        }

        public static Item getDefault() {
            return new Item("none");
        }
    }

    /** Typed through the allow-list: its ids say what to build, so it is not read back either. */
    public interface Shape {
    }

    public record Square(Item corner) implements Shape {
    }

    public record Drawing(List<Shape> shapes) {
    }

    /** An interface none of whose implementations is allow-listed: written without a type id. */
    public interface Untyped {
    }

    public record Plain(int x) implements Untyped {
    }

    /** An allow-listed implementation of another interface that holds an untyped one. */
    public interface Box {
    }

    public record Crate(Untyped content) implements Box {
    }

    /** A bean whose only way to the untyped interface is a getter (no field of that type). */
    public static final class Computed {
        public String getId() {
            return "c";
        }

        public Untyped getContent() {
            return new Plain(1);
        }
    }

    final JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Square.class, Crate.class).build();

    static <T> Type t(ResultType<T> token) {
        return token.type();
    }

    record Case(String name, Type type, Object value) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> plain() {
        Item a = new Item("a");
        return Stream.of(
                new Case("a record", Item.class, a),
                new Case("primitives, an enum and a record", Line.class, new Line(a, 2, 3L, true, Colour.RED)),
                new Case("a list", t(new ResultType<List<Item>>() { }), List.of(a, a)),
                new Case("an array", Item[].class, new Item[] {a}),
                new Case("a map", t(new ResultType<Map<String, Item>>() { }), new LinkedHashMap<>(Map.of("a", a))),
                new Case("an optional", t(new ResultType<Optional<Item>>() { }), Optional.of(a)),
                new Case("a recursive record", Tree.class,
                        new Tree("root", List.of(new Tree("leaf", List.of(), a)), a)),
                new Case("a generic record", t(new ResultType<Generic<Item>>() { }),
                        new Generic<>(List.of(a), Optional.of(a))),
                new Case("a bean", Basket.class, new Basket(a)),
                new Case("an allow-listed subtype", Shape.class, new Square(a)),
                new Case("allow-listed subtypes inside a record", Drawing.class, new Drawing(List.of(new Square(a)))));
    }

    @BeforeEach
    void reset() {
        BUILT.set(0);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("plain")
    void aPlainResultIsWrittenOnceAndNotBuiltAgainToCheckIt(Case c) {
        codec.checkReplayable(c.type());
        int before = BUILT.get();
        byte[] data = codec.encode(c.value(), c.type());
        assertThat(BUILT).as("built while recording").hasValue(before);

        Object replayed = codec.decode(data, c.type());
        assertThat(BUILT.get()).as("a replay builds them").isGreaterThan(before);
        if (c.value() instanceof Item[] items) {
            assertThat((Item[]) replayed).containsExactly(items);
        } else if (!(c.value() instanceof Basket)) {
            assertThat(replayed).isEqualTo(c.value());
        }
    }

    static Stream<Case> unreadable() {
        return Stream.of(
                new Case("an array of it", Untyped[].class, new Untyped[] {new Plain(1)}),
                new Case("a list of it", t(new ResultType<List<Untyped>>() { }), List.of(new Plain(1))),
                new Case("a bean's getter", Computed.class, new Computed()),
                new Case("an allow-listed subtype's component", Box.class, new Crate(new Plain(1))),
                new Case("inside a list of allow-listed subtypes", t(new ResultType<List<Box>>() { }),
                        List.of(new Crate(new Plain(1)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unreadable")
    void aValueHoldingAnInterfaceWithoutTypeIdsIsReadBackAndRefusedBeforeItIsRecorded(Case c) {
        assertThatThrownBy(() -> codec.encode(c.value(), c.type()))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(c.type().getTypeName())
                .hasMessageContaining("would not replay, because reading it back fails");
    }

    @Test
    void aNullResultOfAnInterfaceTypeReplaysAsNull() {
        assertThat(codec.decode(codec.encode(null, Shape.class), Shape.class)).isNull();
    }

    @Test
    void aValueOfAnInterfaceWithNoAllowListedImplementationIsRefusedNamingItsClass() {
        // what checkReplayable refuses when the method is first seen; encode alone refuses it as well
        assertThatThrownBy(() -> codec.encode(new Plain(1), Untyped.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(Plain.class.getName() + " is not on the codec's allow-list");
    }

    /** The properties an allow-listed subtype is written with are checked when the method is first seen. */
    public interface Attachment {
    }

    public record FileRef(String name, Class<?> loader) implements Attachment {
    }

    @Test
    void thePropertiesOfAnAbstractTypesAllowListedSubtypesAreCheckedWhenFirstSeen() {
        JacksonResultCodec attachments = JacksonResultCodec.builder().allowSubtypes(FileRef.class).build();
        assertThatThrownBy(() -> attachments.checkReplayable(Attachment.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("loader")
                .hasMessageContaining("java.lang.Class");
    }

    /** Subtypes deduced from their properties, known only from the allow-list (no {@code @JsonSubTypes}). */
    @JsonTypeInfo(use = JsonTypeInfo.Id.DEDUCTION)
    public interface Reading {
    }

    public record Celsius(double celsius) implements Reading {
    }

    public record Kelvin(double kelvin) implements Reading {
    }

    @Test
    void deducedSubtypesAreTheAllowListedOnes() {
        JacksonResultCodec readings = JacksonResultCodec.builder().allowSubtypes(Celsius.class, Kelvin.class).build();
        Type type = t(new ResultType<List<Reading>>() { });
        List<Reading> value = List.of(new Celsius(21.5), new Kelvin(300));

        byte[] data = readings.encode(value, type);

        assertThat(new String(data, UTF_8)).isEqualTo("[{\"celsius\":21.5},{\"kelvin\":300.0}]");
        assertThat(readings.decode(data, type)).isEqualTo(value);
    }
}
