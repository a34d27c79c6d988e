package dev.idempotency.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.replay.ReplayModel.Accepted;
import dev.idempotency.replay.ReplayModel.Card;
import dev.idempotency.replay.ReplayModel.Circle;
import dev.idempotency.replay.ReplayModel.Money;
import dev.idempotency.replay.ReplayModel.Outcome;
import dev.idempotency.replay.ReplayModel.Payment;
import dev.idempotency.replay.ReplayModel.Probe;
import dev.idempotency.replay.ReplayModel.ProbeOutcome;
import dev.idempotency.replay.ReplayModel.Shape;
import dev.idempotency.replay.ReplayModel.Tagged;
import dev.idempotency.replay.ReplayModel.TaggedValue;
import dev.idempotency.replay.ReplayModel.Transfer;
import dev.idempotency.replay.ReplayModel.Verdict;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The allow-list applies wherever a type id is written or read, not only at the top of the value: elements of lists
 * and arrays, map values, optionals and record components. {@code Circle}, {@code Card} and {@code Accepted} are
 * allow-listed; {@code Square}, {@code Transfer} (a permitted subclass of the sealed {@code Payment}) and
 * {@code ProbeOutcome} (one of the sealed {@code Outcome}) are not.
 */
class NestedAllowListTest {

    static final Money TEN = new Money(new BigDecimal("10.00"), "EUR");

    final JacksonResultCodec codec = JacksonResultCodec.builder()
            .allowSubtypes(Circle.class, Card.class, Accepted.class, TaggedValue.class).build();

    record Square(double side) implements Shape { }

    record Receipt(String id, Payment payment) { }

    record Drawing(String name, List<Shape> shapes) { }

    static <T> Type t(ResultType<T> token) {
        return token.type();
    }

    /** A declared type, a value, and the class inside it that is not allow-listed (null: every class is). */
    record Nested(String name, Type type, Object value, Class<?> unlisted) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Nested> unlisted() {
        return Stream.of(
                new Nested("List<Shape> with a Square", t(new ResultType<List<Shape>>() { }),
                        List.of(new Circle(1), new Square(2)), Square.class),
                new Nested("List<Payment> (sealed) with a Transfer", t(new ResultType<List<Payment>>() { }),
                        List.of(new Card("4242", TEN), new Transfer("DE89", TEN)), Transfer.class),
                new Nested("Map<String, Payment> with a Transfer", t(new ResultType<Map<String, Payment>>() { }),
                        new LinkedHashMap<>(Map.of("t", new Transfer("DE89", TEN))), Transfer.class),
                new Nested("Optional<Payment> of a Transfer", t(new ResultType<Optional<Payment>>() { }),
                        Optional.of(new Transfer("DE89", TEN)), Transfer.class),
                new Nested("Payment[] with a Transfer", Payment[].class,
                        new Payment[] {new Card("4242", TEN), new Transfer("DE89", TEN)}, Transfer.class),
                new Nested("Shape[] with a Square", Shape[].class, new Shape[] {new Square(1)}, Square.class),
                new Nested("a record component of a sealed type", Receipt.class,
                        new Receipt("r-1", new Transfer("DE89", TEN)), Transfer.class),
                new Nested("a record component List<Shape>", Drawing.class,
                        new Drawing("d", List.of(new Circle(1), new Square(2))), Square.class),
                new Nested("List<Tagged> (class-name ids) with an unlisted class",
                        t(new ResultType<List<Tagged>>() { }),
                        List.of(new TaggedValue("v"), new Probe()), Probe.class));
    }

    static Stream<Nested> listed() {
        return Stream.of(
                new Nested("List<Shape>", t(new ResultType<List<Shape>>() { }), List.of(new Circle(1)), null),
                new Nested("List<Payment>", t(new ResultType<List<Payment>>() { }), List.of(new Card("1", TEN)), null),
                new Nested("Map<String, Payment>", t(new ResultType<Map<String, Payment>>() { }),
                        Map.of("c", new Card("1", TEN)), null),
                new Nested("Optional<Payment>", t(new ResultType<Optional<Payment>>() { }),
                        Optional.of(new Card("1", TEN)), null),
                new Nested("Payment[]", Payment[].class, new Payment[] {new Card("1", TEN)}, null),
                new Nested("a record component of a sealed type", Receipt.class, new Receipt("r", new Card("1", TEN)),
                        null),
                new Nested("a record component List<Shape>", Drawing.class,
                        new Drawing("d", List.of(new Circle(1), new Circle(2))), null),
                new Nested("List<Tagged> (class-name ids)", t(new ResultType<List<Tagged>>() { }),
                        List.of(new TaggedValue("v")), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unlisted")
    void anUnlistedSubtypeInsideTheValueIsRefusedWhenRecorded(Nested n) {
        Probe.INSTANCES.set(0);
        assertThatThrownBy(() -> codec.encode(n.value(), n.type()))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(n.type().getTypeName())
                .hasMessageContaining(n.unlisted().getName())
                .hasMessageContaining("allow-list");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("listed")
    void allowListedSubtypesInsideTheValueRoundTrip(Nested n) {
        byte[] data = codec.encode(n.value(), n.type());
        assertThat(new String(data, UTF_8)).contains("\"@").doesNotContain("dev.idempotency.replay.ReplayModel$C");
        assertThat(codec.decode(data, n.type())).isEqualTo(n.value());
    }

    /** A recorded row (written by an older allow-list, or changed by hand) and the id inside it to refuse. */
    record Row(String name, Type type, String json, String id) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final String CARD = "{\"@type\":\"Card\",\"last4\":\"4242\",\"amount\":null}";
    // the ids Jackson gives the permitted subclasses of a sealed type by default (what the codec wrote before the
    // allow-list applied at depth): the realistic rows, which Jackson alone resolves
    static final String TRANSFER = "{\"@type\":\"ReplayModel$Transfer\",\"iban\":\"DE89\",\"amount\":null}";
    static final String PROBE_OUTCOME = "{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}";

    static Stream<Row> rows() {
        return Stream.of(
                new Row("List<Payment>: a permitted but unlisted Transfer", t(new ResultType<List<Payment>>() { }),
                        "[" + CARD + "," + TRANSFER + "]", "ReplayModel$Transfer"),
                new Row("Map<String, Payment>: a Transfer", t(new ResultType<Map<String, Payment>>() { }),
                        "{\"t\":" + TRANSFER + "}", "ReplayModel$Transfer"),
                new Row("Optional<Payment>: a Transfer", t(new ResultType<Optional<Payment>>() { }), TRANSFER,
                        "ReplayModel$Transfer"),
                new Row("Payment[]: a Transfer", Payment[].class, "[" + TRANSFER + "]", "ReplayModel$Transfer"),
                new Row("a record component: a Transfer", Receipt.class,
                        "{\"id\":\"r\",\"payment\":" + TRANSFER + "}", "ReplayModel$Transfer"),
                new Row("List<Outcome>: the probe", t(new ResultType<List<Outcome>>() { }),
                        "[{\"@type\":\"Accepted\",\"id\":\"a\"}," + PROBE_OUTCOME + "]", "ReplayModel$ProbeOutcome"),
                new Row("Map<String, Outcome>: the probe", t(new ResultType<Map<String, Outcome>>() { }),
                        "{\"x\":" + PROBE_OUTCOME + "}", "ReplayModel$ProbeOutcome"),
                new Row("Optional<Outcome>: the probe", t(new ResultType<Optional<Outcome>>() { }), PROBE_OUTCOME,
                        "ReplayModel$ProbeOutcome"),
                new Row("Outcome[]: the probe", Outcome[].class, "[" + PROBE_OUTCOME + "]", "ReplayModel$ProbeOutcome"),
                new Row("a record component: the probe", Verdict.class,
                        "{\"id\":\"v\",\"outcome\":" + PROBE_OUTCOME + "}", "ReplayModel$ProbeOutcome"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void anUnlistedTypeIdInsideARowIsRefusedAndNothingIsBuilt(Row r) {
        Probe.INSTANCES.set(0);
        ProbeOutcome.INSTANCES.set(0);
        assertThatThrownBy(() -> codec.decode(r.json().getBytes(UTF_8), r.type()))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(r.type().getTypeName())
                .hasMessageContaining("'" + r.id() + "'")
                .hasMessageContaining("allow-list");
        assertThat(Probe.INSTANCES).hasValue(0);
        assertThat(ProbeOutcome.INSTANCES).hasValue(0);
    }

    @Test
    void controlJacksonAloneTakesTheSealedTypesPermittedSubclassesAsSubtypes() {
        // shows what the codec's resolver stops: without it, the permitted ProbeOutcome is built from its default
        // name, although nothing registered it
        ProbeOutcome.INSTANCES.set(0);
        tools.jackson.databind.json.JsonMapper.builder()
                .addMixIn(Outcome.class, TypedByName.class).build()
                .readValue(PROBE_OUTCOME, Outcome.class);
        assertThat(ProbeOutcome.INSTANCES).hasValue(1);
    }

    @com.fasterxml.jackson.annotation.JsonTypeInfo(use = com.fasterxml.jackson.annotation.JsonTypeInfo.Id.NAME,
            property = "@type")
    interface TypedByName { }

    @Test
    void aReversibleCallReturningAnUnlistedElementRecordsNothingAndARetryRunsAgain() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).codec(codec).build();
        IdempotentOperation<Object> op = IdempotentOperation
                .builder("Shapes.draw", Tier.REVERSIBLE, ResultType.ofType(t(new ResultType<List<Shape>>() { })))
                .build();
        AtomicInteger runs = new AtomicInteger();

        for (int i = 1; i <= 2; i++) {
            assertThatThrownBy(() -> executor.execute(op, "k-1", new Object[0], () -> {
                runs.incrementAndGet();
                return List.of(new Circle(1), new Square(2));
            })).isInstanceOf(IdempotencyReplayException.class)
                    .hasMessageContaining(Square.class.getName());
            assertThat(store.size()).as("nothing recorded, the claim released").isZero();
            assertThat(runs).hasValue(i);
        }
    }

    @Test
    void anIrreversibleCallReturningAnUnlistedElementIsHeldForReviewAndNotRunAgain() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).codec(codec).build();
        IdempotentOperation<Object> op = IdempotentOperation
                .builder("Payments.pay", Tier.IRREVERSIBLE,
                        ResultType.ofType(t(new ResultType<List<Payment>>() { })))
                .build();
        AtomicInteger runs = new AtomicInteger();

        assertThatThrownBy(() -> executor.execute(op, "p-1", new Object[0], () -> {
            runs.incrementAndGet();
            return List.of(new Transfer("DE89", TEN));
        })).isInstanceOf(IdempotencyReplayException.class).hasMessageContaining(Transfer.class.getName());
        assertThatThrownBy(() -> executor.execute(op, "p-1", new Object[0], () -> {
            runs.incrementAndGet();
            return List.of();
        })).isInstanceOf(IdempotencyException.class);
        assertThat(runs).as("the side effect is not repeated").hasValue(1);
    }

    /** The application's own type ids: names from its {@code @JsonSubTypes}; the allow-list still decides. */
    @com.fasterxml.jackson.annotation.JsonTypeInfo(use = com.fasterxml.jackson.annotation.JsonTypeInfo.Id.NAME,
            property = "kind")
    @com.fasterxml.jackson.annotation.JsonSubTypes({
        @com.fasterxml.jackson.annotation.JsonSubTypes.Type(value = Listed.class, name = "listed"),
        @com.fasterxml.jackson.annotation.JsonSubTypes.Type(value = Counted.class, name = "counted")})
    interface Named { }

    record Listed(String v) implements Named { }

    /** Named by the application's @JsonSubTypes but not allow-listed; counts its instantiations. */
    record Counted(String w) implements Named {
        static final AtomicInteger INSTANCES = new AtomicInteger();

        Counted {
            INSTANCES.incrementAndGet();
        }
    }

    /** Subtypes deduced from their properties: no id is written, the deduced class must still be allow-listed. */
    @com.fasterxml.jackson.annotation.JsonTypeInfo(use = com.fasterxml.jackson.annotation.JsonTypeInfo.Id.DEDUCTION)
    @com.fasterxml.jackson.annotation.JsonSubTypes({
        @com.fasterxml.jackson.annotation.JsonSubTypes.Type(DeducedListed.class),
        @com.fasterxml.jackson.annotation.JsonSubTypes.Type(DeducedCounted.class)})
    interface Deduced { }

    record DeducedListed(String a) implements Deduced { }

    record DeducedCounted(String b) implements Deduced {
        static final AtomicInteger INSTANCES = new AtomicInteger();

        DeducedCounted {
            INSTANCES.incrementAndGet();
        }
    }

    @Test
    void aSubtypeNamedByTheApplicationsOwnJsonSubTypesIsNeitherRecordedNorReplayedUnlessAllowListed() {
        JacksonResultCodec own = JacksonResultCodec.builder().allowSubtypes(Listed.class).build();
        Type list = t(new ResultType<List<Named>>() { });
        byte[] data = own.encode(List.of(new Listed("x")), list);
        assertThat(own.decode(data, list)).isEqualTo(List.of(new Listed("x")));
        assertThatThrownBy(() -> own.encode(List.of(new Counted("y")), list))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining(Counted.class.getName());

        Counted.INSTANCES.set(0);
        assertThatThrownBy(() -> own.decode("[{\"kind\":\"counted\",\"w\":\"y\"}]".getBytes(UTF_8), list))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("'counted'");
        assertThat(Counted.INSTANCES).hasValue(0);
    }

    @Test
    void aDeducedSubtypeIsRecordedAndReplayedOnlyIfAllowListed() {
        JacksonResultCodec own = JacksonResultCodec.builder().allowSubtypes(DeducedListed.class).build();
        Type list = t(new ResultType<List<Deduced>>() { });
        byte[] data = own.encode(List.of(new DeducedListed("x")), list);
        assertThat(own.decode(data, list)).isEqualTo(List.of(new DeducedListed("x")));
        // no id is written, so the read-back refuses it before it is recorded
        assertThatThrownBy(() -> own.encode(List.of(new DeducedCounted("y")), list))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("would not replay");

        DeducedCounted.INSTANCES.set(0);
        assertThatThrownBy(() -> own.decode("[{\"b\":\"y\"}]".getBytes(UTF_8), list))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("allow-list");
        assertThat(DeducedCounted.INSTANCES).hasValue(0);
    }

    /** An interface none of whose implementations is allow-listed: Jackson writes it without a type id. */
    interface Unlisted { }

    record Plain(int x) implements Unlisted { }

    record Holder(String id, Unlisted inner) { }

    @Test
    void aValueThatWouldNotReadBackIsRefusedWhenRecorded() {
        // the safety net: an interface-typed component with no allow-listed implementation carries no type id, so
        // it could never be read back; refused now rather than at every replay for the whole ttl
        assertThatThrownBy(() -> codec.encode(new Holder("h", new Plain(1)), Holder.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(Holder.class.getTypeName())
                .hasMessageContaining("would not replay");
    }

    @Test
    void theRefusalSaysWhereInTheValueTheUnlistedClassIs() {
        assertThatThrownBy(() -> codec.encode(new Drawing("d", List.of(new Circle(1), new Square(2))), Drawing.class))
                .hasMessageContaining("shapes").hasMessageContaining("[1]");
    }
}
