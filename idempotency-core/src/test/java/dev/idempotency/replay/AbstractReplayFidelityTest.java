package dev.idempotency.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.replay.ReplayModel.Animal;
import dev.idempotency.replay.ReplayModel.Card;
import dev.idempotency.replay.ReplayModel.Circle;
import dev.idempotency.replay.ReplayModel.Customer;
import dev.idempotency.replay.ReplayModel.Dog;
import dev.idempotency.replay.ReplayModel.Line;
import dev.idempotency.replay.ReplayModel.Money;
import dev.idempotency.replay.ReplayModel.Order;
import dev.idempotency.replay.ReplayModel.Page;
import dev.idempotency.replay.ReplayModel.Payment;
import dev.idempotency.replay.ReplayModel.Shape;
import dev.idempotency.replay.ReplayModel.Status;
import dev.idempotency.replay.ReplayModel.Tagged;
import dev.idempotency.replay.ReplayModel.TaggedValue;
import dev.idempotency.replay.ReplayModel.Transfer;
import dev.idempotency.store.IdempotencyStore;
import java.lang.reflect.Array;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The replay-fidelity suite: for every family of result type, the first call through {@link IdempotentExecutor}
 * runs, the second replays from the store, and the replay equals the original, with the same classes inside
 * (elements of collections, map keys and values, record components) and {@code BigDecimal} scales. A store module
 * extends it with its own store: the same cases then make a round trip through that database.
 */
public abstract class AbstractReplayFidelityTest {

    /** The codec of the suite: the default mapper and the allow-list of the abstract result types below. */
    public static JacksonResultCodec codec() {
        return JacksonResultCodec.builder()
                .allowSubtypes(Card.class, Transfer.class, Dog.class, Circle.class, TaggedValue.class,
                        ReplayModel.Accepted.class)
                .build();
    }

    /** A new, empty store for one test. */
    protected abstract IdempotencyStore newStore();

    private IdempotentExecutor executor;
    private final List<IdempotencyEvent.Outcome> outcomes = new ArrayList<>();

    @BeforeEach
    public void startExecutor() {
        executor = IdempotentExecutor.builder(newStore())
                .codec(codec())
                .listener(e -> outcomes.add(e.outcome()))
                .build();
    }

    /** One type family: a name, the declared type, the value, and what else to check on the replay. */
    public record Case(String name, Type type, Supplier<Object> value, Consumer<Object> also) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case of(String name, Type type, Supplier<Object> value) {
        return new Case(name, type, value, replayed -> { });
    }

    static Case of(String name, Type type, Supplier<Object> value, Consumer<Object> also) {
        return new Case(name, type, value, also);
    }

    private static <T> Type type(ResultType<T> token) {
        return token.type();
    }

    static final Money TEN = new Money(new BigDecimal("10.00"), "EUR");

    static Order order(String id) {
        return new Order(id, Status.PAID, new Money(new BigDecimal("12.50"), "EUR"),
                List.of(new Line("A-1", 2, TEN), new Line("B-2", 1, new Money(new BigDecimal("-0.10"), "EUR"))),
                Instant.parse("2026-11-29T08:15:30.123456789Z"));
    }

    static Stream<Case> families() {
        return Stream.of(
                // records, POJOs, enums
                of("record", Order.class, () -> order("o-1")),
                of("record with null component", Money.class, () -> new Money(null, "EUR")),
                of("POJO", Customer.class, () -> new Customer("Ada", 3, List.of("vip", "early"))),
                of("enum", Status.class, () -> Status.REFUNDED),
                of("enum whose constants have bodies", ReplayModel.Operation.class, () -> ReplayModel.Operation.MINUS),
                of("List of enums whose constants have bodies",
                        type(new ResultType<List<ReplayModel.Operation>>() { }),
                        () -> List.of(ReplayModel.Operation.PLUS, ReplayModel.Operation.MINUS)),
                // generics
                of("List<Order>", type(new ResultType<List<Order>>() { }), () -> List.of(order("o-1"), order("o-2")),
                        r -> assertThat(((List<?>) r).get(0)).isInstanceOf(Order.class)),
                of("Map<String, List<Money>>", type(new ResultType<Map<String, List<Money>>>() { }),
                        () -> Map.of("EUR", List.of(TEN, new Money(new BigDecimal("0.5"), "EUR")),
                                "USD", List.of(new Money(new BigDecimal("1E+3"), "USD"))),
                        r -> assertThat(((Map<?, ?>) r).get("USD")).asInstanceOf(
                                org.assertj.core.api.InstanceOfAssertFactories.LIST).first()
                                .isInstanceOf(Money.class)),
                of("Map<Status, Order> (enum keys)", type(new ResultType<Map<Status, Order>>() { }),
                        () -> Map.of(Status.NEW, order("n"), Status.PAID, order("p"))),
                of("Map<LocalDate, BigDecimal> (java.time keys)",
                        type(new ResultType<Map<LocalDate, BigDecimal>>() { }),
                        () -> Map.of(LocalDate.of(2026, 1, 31), new BigDecimal("7.000"))),
                of("SortedMap<String, Integer>", type(new ResultType<SortedMap<String, Integer>>() { }),
                        () -> new TreeMap<>(Map.of("b", 2, "a", 1)),
                        r -> assertThat(r).isInstanceOf(SortedMap.class)),
                of("Set<Status>", type(new ResultType<Set<Status>>() { }),
                        () -> EnumSet.of(Status.NEW, Status.REFUNDED)),
                of("Page<Order> (generic record)", type(new ResultType<Page<Order>>() { }),
                        () -> new Page<>(List.of(order("o-9")), 1),
                        r -> assertThat(((Page<?>) r).items().get(0)).isInstanceOf(Order.class)),
                of("Optional<Order> present", type(new ResultType<Optional<Order>>() { }),
                        () -> Optional.of(order("o-1")),
                        r -> assertThat(((Optional<?>) r).get()).isInstanceOf(Order.class)),
                of("Optional<Order> empty", type(new ResultType<Optional<Order>>() { }), Optional::empty),
                of("Optional<List<Money>>", type(new ResultType<Optional<List<Money>>>() { }),
                        () -> Optional.of(List.of(TEN))),
                of("List<Optional<Money>>", type(new ResultType<List<Optional<Money>>>() { }),
                        () -> List.of(Optional.of(TEN), Optional.empty())),
                of("OptionalInt", OptionalInt.class, () -> OptionalInt.of(42)),
                // java.time
                of("Instant with nanoseconds", Instant.class, () -> Instant.parse("2026-11-29T08:15:30.123456789Z")),
                of("LocalDate", LocalDate.class, () -> LocalDate.of(2026, 2, 28)),
                of("LocalDateTime", LocalDateTime.class, () -> LocalDateTime.of(2026, 3, 29, 2, 30, 0, 1)),
                of("LocalTime", LocalTime.class, () -> LocalTime.of(23, 59, 59, 999_999_999)),
                of("OffsetDateTime", OffsetDateTime.class,
                        () -> OffsetDateTime.of(2026, 6, 1, 12, 0, 0, 0, ZoneOffset.ofHoursMinutes(5, 30))),
                of("ZonedDateTime keeps its zone id", ZonedDateTime.class,
                        () -> ZonedDateTime.of(2026, 10, 25, 2, 30, 0, 0, ZoneId.of("Europe/Paris"))),
                of("Duration", Duration.class, () -> Duration.ofSeconds(90061, 5)),
                of("Period", Period.class, () -> Period.of(1, 2, 3)),
                of("Year and YearMonth", type(new ResultType<List<YearMonth>>() { }),
                        () -> List.of(YearMonth.of(2026, 11), Year.of(2027).atMonth(1))),
                // numbers
                of("BigDecimal keeps trailing zeros", BigDecimal.class, () -> new BigDecimal("12.50"),
                        r -> assertThat(((BigDecimal) r).scale()).isEqualTo(2)),
                of("BigDecimal with negative scale", BigDecimal.class, () -> new BigDecimal("1E+3"),
                        r -> assertThat(((BigDecimal) r).scale()).isEqualTo(-3)),
                of("BigDecimal zero with scale", BigDecimal.class, () -> new BigDecimal("0.000"),
                        r -> assertThat(((BigDecimal) r).scale()).isEqualTo(3)),
                of("BigDecimal beyond double precision", BigDecimal.class,
                        () -> new BigDecimal("12345678901234567890.123456789012345678901")),
                of("List<BigDecimal> keeps each scale", type(new ResultType<List<BigDecimal>>() { }),
                        () -> List.of(new BigDecimal("1.0"), new BigDecimal("1.00"), new BigDecimal("100"))),
                of("BigInteger", BigInteger.class, () -> new BigInteger("123456789012345678901234567890")),
                of("Long.MAX_VALUE", Long.class, () -> Long.MAX_VALUE),
                of("double NaN", Double.class, () -> Double.NaN),
                of("double -0.0", Double.class, () -> -0.0d),
                // primitives
                of("int", int.class, () -> 42),
                of("long", long.class, () -> -7L),
                of("double", double.class, () -> 0.1d + 0.2d),
                of("float", float.class, () -> 1.1f),
                of("boolean", boolean.class, () -> true),
                of("char", char.class, () -> 'é'),
                // strings, bytes, arrays
                of("String with every kind of character", String.class, () -> "a\u0000b\"c\\d\nÉ😀\u2028"),
                of("byte[]", byte[].class, () -> new byte[] {0, 1, -1, 127, -128}),
                of("empty byte[]", byte[].class, () -> new byte[0]),
                of("int[]", int[].class, () -> new int[] {3, 1, 2}),
                of("String[][]", String[][].class, () -> new String[][] {{"a"}, {}, {"b", null}}),
                of("Order[]", Order[].class, () -> new Order[] {order("o-1"), order("o-2")},
                        r -> assertThat(((Order[]) r)[1]).isInstanceOf(Order.class)),
                of("UUID", UUID.class, () -> UUID.fromString("2f1c5e9a-0000-4000-8000-000000000001")),
                of("URI", URI.class, () -> URI.create("https://example.com/a?b=c")),
                of("JsonNode", JsonNode.class, () -> {
                    ObjectNode n = JsonMapper.shared().createObjectNode();
                    n.put("x", new BigDecimal("1.50")).putArray("y").add(1).add("two");
                    return n;
                }),
                // null and void
                of("null for a record", Order.class, () -> null),
                of("null for a list", type(new ResultType<List<Order>>() { }), () -> null),
                of("void", void.class, () -> null),
                // abstract and sealed, through the allow-list
                of("sealed interface of records", Payment.class, () -> new Transfer("DE89", TEN),
                        r -> assertThat(r).isInstanceOf(Transfer.class)),
                of("List of a sealed interface, mixed", type(new ResultType<List<Payment>>() { }),
                        () -> List.of(new Card("4242", TEN), new Transfer("FR76", TEN)),
                        r -> assertThat((List<?>) r).extracting(Object::getClass)
                                .containsExactly(Card.class, Transfer.class)),
                of("abstract class", Animal.class, () -> new Dog("Rex", true),
                        r -> assertThat(r).isInstanceOf(Dog.class)),
                of("open interface", Shape.class, () -> new Circle(1.5)),
                of("interface annotated with class-name type ids, allow-listed", Tagged.class,
                        () -> new TaggedValue("v")),
                of("Map<String, Shape>", type(new ResultType<Map<String, Shape>>() { }),
                        () -> new LinkedHashMap<>(Map.of("c", new Circle(2.0)))),
                // allow-listed subtypes inside the value: elements, values, arrays, optionals, record components
                of("Map<String, Payment>", type(new ResultType<Map<String, Payment>>() { }),
                        () -> new LinkedHashMap<>(Map.of("c", new Card("4242", TEN), "t", new Transfer("DE89", TEN)))),
                of("Optional<Payment>", type(new ResultType<Optional<Payment>>() { }),
                        () -> Optional.of(new Transfer("DE89", TEN)),
                        r -> assertThat(((Optional<?>) r).get()).isInstanceOf(Transfer.class)),
                of("Payment[]", ReplayModel.Payment[].class,
                        () -> new Payment[] {new Card("4242", TEN), new Transfer("FR76", null)}),
                of("List<Outcome> (sealed, one subtype allow-listed)",
                        type(new ResultType<List<ReplayModel.Outcome>>() { }),
                        () -> List.of(new ReplayModel.Accepted("a"), new ReplayModel.Accepted("b"))),
                of("record with a sealed-typed component", ReplayModel.Verdict.class,
                        () -> new ReplayModel.Verdict("v-1", new ReplayModel.Accepted("a")),
                        r -> assertThat(((ReplayModel.Verdict) r).outcome()).isInstanceOf(ReplayModel.Accepted.class)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    public void theFirstCallRunsAndTheSecondReplaysAnEqualValue(Case c) {
        IdempotentOperation<Object> op = IdempotentOperation
                .builder("Fidelity." + c.name(), Tier.REVERSIBLE, ResultType.ofType(c.type()))
                .build();
        AtomicInteger runs = new AtomicInteger();
        Object original = executor.execute(op, "key:" + c.name(), new Object[] {c.name()}, () -> {
            runs.incrementAndGet();
            return c.value().get();
        });
        Object replayed = executor.execute(op, "key:" + c.name(), new Object[] {c.name()}, () -> {
            runs.incrementAndGet();
            return c.value().get();
        });

        assertThat(runs).as("the method ran once").hasValue(1);
        assertThat(outcomes).containsExactly(IdempotencyEvent.Outcome.EXECUTED, IdempotencyEvent.Outcome.REPLAYED);
        assertThat(replayed).isEqualTo(original);
        if (original != null && (original.getClass().isRecord() || original.getClass().isArray()
                || original instanceof Collection<?> || original instanceof Map<?, ?>)) {
            assertThat(replayed).as("a new object, read from the store").isNotSameAs(original);
        }
        assertSameShape(original, replayed, c.name());
        c.also().accept(replayed);
    }

    /**
     * Equal is not enough: a {@code List<Money>} of maps is not equal either, but a {@code BigDecimal} inside a map of
     * {@code Object} could be; so walk both values and compare the classes and scales found inside.
     */
    static void assertSameShape(Object expected, Object actual, String path) {
        if (expected == null) {
            assertThat(actual).as(path).isNull();
            return;
        }
        assertThat(actual).as(path).isNotNull();
        if (expected instanceof BigDecimal e) {
            assertThat(((BigDecimal) actual).scale()).as(path + " scale").isEqualTo(e.scale());
        }
        if (expected instanceof Collection<?> e) {
            assertThat(actual).as(path).isInstanceOf(Collection.class);
            List<?> ea = new ArrayList<>(e);
            List<?> aa = new ArrayList<>((Collection<?>) actual);
            if (expected instanceof List<?>) {
                for (int i = 0; i < ea.size(); i++) {
                    assertSameShape(ea.get(i), aa.get(i), path + "[" + i + "]");
                }
            } else {
                List<String> expectedClasses = ea.stream().map(o -> o == null ? "null" : o.getClass().getName())
                        .sorted().toList();
                List<String> actualClasses = aa.stream().map(o -> o == null ? "null" : o.getClass().getName())
                        .sorted().toList();
                assertThat(actualClasses).as(path + " element classes").isEqualTo(expectedClasses);
            }
        } else if (expected instanceof Map<?, ?> e) {
            Map<?, ?> a = (Map<?, ?>) actual;
            for (Map.Entry<?, ?> entry : e.entrySet()) {
                Object key = a.keySet().stream().filter(entry.getKey()::equals).findFirst()
                        .orElseThrow(() -> new AssertionError(path + " lost the key " + entry.getKey()));
                assertThat(key).as(path + " key class").hasSameClassAs(entry.getKey());
                assertSameShape(entry.getValue(), a.get(entry.getKey()), path + "[" + entry.getKey() + "]");
            }
        } else if (expected instanceof Optional<?> e) {
            assertSameShape(e.orElse(null), ((Optional<?>) actual).orElse(null), path + ".get()");
        } else if (expected.getClass().isArray()) {
            assertThat(actual.getClass()).as(path).isEqualTo(expected.getClass());
            for (int i = 0; i < Array.getLength(expected); i++) {
                assertSameShape(Array.get(expected, i), Array.get(actual, i), path + "[" + i + "]");
            }
        } else if (!(expected instanceof JsonNode)) {
            assertThat(actual).as(path).hasSameClassAs(expected);
            if (expected.getClass().isRecord()) {
                for (RecordComponent rc : expected.getClass().getRecordComponents()) {
                    try {
                        assertSameShape(rc.getAccessor().invoke(expected), rc.getAccessor().invoke(actual),
                                path + "." + rc.getName());
                    } catch (ReflectiveOperationException ex) {
                        throw new AssertionError(ex);
                    }
                }
            }
        }
    }
}
