package dev.idempotency.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonTypeName;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.replay.ReplayModel.Animal;
import dev.idempotency.replay.ReplayModel.Card;
import dev.idempotency.replay.ReplayModel.Circle;
import dev.idempotency.replay.ReplayModel.Dog;
import dev.idempotency.replay.ReplayModel.Money;
import dev.idempotency.replay.ReplayModel.Payment;
import dev.idempotency.replay.ReplayModel.Probe;
import dev.idempotency.replay.ReplayModel.Shape;
import dev.idempotency.replay.ReplayModel.Tagged;
import dev.idempotency.replay.ReplayModel.TaggedValue;
import dev.idempotency.replay.ReplayModel.Transfer;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Reader;
import java.io.Writer;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.Spliterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.DefaultTyping;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.jsontype.BasicPolymorphicTypeValidator;

class JacksonResultCodecTest {

    final JacksonResultCodec plain = JacksonResultCodec.create();

    /** A declared type, and a word the refusal must name. */
    record Refused(String name, Type type, String mentions) {
        @Override
        public String toString() {
            return name;
        }
    }

    static <T> Type t(ResultType<T> token) {
        return token.type();
    }

    static Stream<Refused> refused() {
        return Stream.of(
                new Refused("Stream", t(new ResultType<Stream<String>>() { }), "java.util.stream.Stream"),
                new Refused("IntStream", IntStream.class, "IntStream"),
                new Refused("Iterator", t(new ResultType<Iterator<String>>() { }), "Iterator"),
                new Refused("Spliterator", t(new ResultType<Spliterator<String>>() { }), "Spliterator"),
                new Refused("InputStream", InputStream.class, "InputStream"),
                new Refused("OutputStream", OutputStream.class, "OutputStream"),
                new Refused("Reader", Reader.class, "Reader"),
                new Refused("Writer", Writer.class, "Writer"),
                new Refused("Connection", Connection.class, "JDBC"),
                new Refused("PreparedStatement", PreparedStatement.class, "java.sql.Statement"),
                new Refused("ResultSet", ResultSet.class, "JDBC"),
                new Refused("Future", t(new ResultType<Future<String>>() { }), "asynchronous"),
                new Refused("CompletableFuture", t(new ResultType<CompletableFuture<String>>() { }), "asynchronous"),
                new Refused("Thread", Thread.class, "Thread"),
                new Refused("Class", t(new ResultType<Class<?>>() { }), "class to load"),
                new Refused("a stream inside a list", t(new ResultType<List<Stream<String>>>() { }), "Stream"),
                new Refused("an input stream as a map value", t(new ResultType<Map<String, InputStream>>() { }),
                        "InputStream"),
                new Refused("an iterator in an optional", t(new ResultType<Optional<Iterator<String>>>() { }),
                        "Iterator"),
                new Refused("Object", Object.class, "Object"),
                new Refused("a list of Object", t(new ResultType<List<Object>>() { }), "Object"),
                new Refused("a type variable", Generic.class.getTypeParameters()[0], "type variable"),
                new Refused("Number", Number.class, "abstract JDK type"),
                new Refused("a sealed interface without allow-list", Payment.class, "sealed interface"),
                new Refused("an abstract class without allow-list", Animal.class, "abstract class"),
                new Refused("an interface without allow-list", Shape.class, "allow-list"),
                new Refused("a list of an interface without allow-list", t(new ResultType<List<Shape>>() { }),
                        "allow-list"));
    }

    static final class Generic<T> { }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void typesThatCannotBeReplayedAreRefusedWithTheTypeAndWhy(Refused r) {
        assertThatThrownBy(() -> plain.checkReplayable(r.type()))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(r.type().getTypeName())
                .hasMessageContaining(r.mentions());
    }

    @Test
    void theExecutorRefusesAnUnreplayableTypeWhenTheMethodIsFirstSeenBeforeItRuns() {
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).build();
        IdempotentOperation<Object> lines = IdempotentOperation
                .builder("Files.lines", Tier.REVERSIBLE, ResultType.ofType(t(new ResultType<Stream<String>>() { })))
                .build();
        AtomicInteger runs = new AtomicInteger();

        assertThatThrownBy(() -> executor.prepare(lines))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Files.lines").hasMessageContaining("Stream");
        assertThatThrownBy(() -> executor.execute(lines, "first call", new Object[0], () -> {
            runs.incrementAndGet();
            return Stream.of("a");
        })).isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("Files.lines");
        assertThat(runs).hasValue(0);
        assertThat(store.size()).isZero();
    }

    @Test
    void concreteAndCollectionTypesAndAllowListedAbstractTypesAreAccepted() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Card.class, Transfer.class).build();
        for (Type ok : List.of(Money.class, int.class, void.class, byte[].class, Money[].class, JsonNode.class,
                t(new ResultType<List<Money>>() { }), t(new ResultType<Map<String, Set<Money>>>() { }),
                t(new ResultType<Optional<Money>>() { }), Payment.class, t(new ResultType<List<Payment>>() { }),
                t(new ResultType<List<? extends Money>>() { }))) {
            assertThatCode(() -> codec.checkReplayable(ok)).as(ok.getTypeName()).doesNotThrowAnyException();
        }
    }

    @Test
    void bigDecimalKeepsItsScaleInBothDirections() {
        assertThat(new String(plain.encode(new BigDecimal("12.50"), BigDecimal.class), UTF_8)).isEqualTo("12.50");
        assertThat(new String(plain.encode(new BigDecimal("1E+3"), BigDecimal.class), UTF_8)).isEqualTo("1E+3");
        assertThat(((BigDecimal) plain.decode("1.500".getBytes(UTF_8), BigDecimal.class)).scale()).isEqualTo(3);
        assertThat(((BigDecimal) plain.decode("1E+3".getBytes(UTF_8), BigDecimal.class)).scale()).isEqualTo(-3);
        assertThat(((Money) plain.decode("{\"amount\":0.10,\"currency\":\"EUR\"}".getBytes(UTF_8), Money.class))
                .amount()).isEqualTo(new BigDecimal("0.10"));
    }

    @Test
    void anAllowListedSubtypeIsWrittenUnderItsLogicalNameNeverItsClassName() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Card.class)
                .allowSubtype("bank-transfer", Transfer.class).build();
        String card = new String(codec.encode(new Card("4242", null), Payment.class), UTF_8);
        String transfer = new String(codec.encode(new Transfer("DE89", null), Payment.class), UTF_8);

        assertThat(card).contains("\"@type\":\"Card\"").doesNotContain("dev.idempotency");
        assertThat(transfer).contains("\"@type\":\"bank-transfer\"");
        assertThat(codec.decode(transfer.getBytes(UTF_8), Payment.class)).isEqualTo(new Transfer("DE89", null));
    }

    @JsonTypeName("round")
    record Disc(double radius) implements Shape { }

    record Square(double side) implements Shape { }

    @Test
    void theLogicalNameComesFromJsonTypeName() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Disc.class).build();
        assertThat(new String(codec.encode(new Disc(1), Shape.class), UTF_8)).contains("\"@type\":\"round\"");
    }

    @Test
    void aResultOfAnUnlistedSubtypeIsRefusedWhenRecorded() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Circle.class).build();
        assertThatThrownBy(() -> codec.encode(new Square(2), Shape.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(Square.class.getName()).hasMessageContaining("allow-list");
    }

    record Circle2(double r) implements Shape { }

    @Test
    void theBuilderRefusesAbstractClassesAndNameClashes() {
        assertThatThrownBy(() -> JacksonResultCodec.builder().allowSubtypes(Shape.class))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("concrete");
        assertThatThrownBy(() -> JacksonResultCodec.builder().allowSubtype("c", Circle.class)
                .allowSubtype("c", Circle2.class))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share the name 'c'");
    }

    @Test
    void controlALaissezFaireMapperWouldBuildTheProbe() {
        // proves that the probe's counter sees what the tampered-row suite says never happens
        Probe.INSTANCES.set(0);
        JsonMapper unsafe = JsonMapper.builder().activateDefaultTyping(
                BasicPolymorphicTypeValidator.builder().allowIfSubType(Object.class).build(),
                DefaultTyping.NON_FINAL).build();
        unsafe.readValue("[\"" + Probe.class.getName() + "\",{}]", Object.class);
        assertThat(Probe.INSTANCES).hasValue(1);
    }

    @Test
    void controlAPlainJackson3MapperFollowsAClassNameTypeAnnotationToTheProbe() {
        Probe.INSTANCES.set(0);
        JsonMapper.builder().build().readValue("{\"@class\":\"" + Probe.class.getName() + "\"}", Tagged.class);
        assertThat(Probe.INSTANCES).as("Jackson's own default validator lets annotations name any subtype")
                .hasValue(1);

        Probe.INSTANCES.set(0);
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(TaggedValue.class).build();
        assertThatThrownBy(() -> codec.decode(("{\"@class\":\"" + Probe.class.getName() + "\"}").getBytes(UTF_8),
                Tagged.class)).isInstanceOf(IdempotencyReplayException.class);
        assertThat(Probe.INSTANCES).as("the codec's validator admits the allow-list only").hasValue(0);
    }

    @Test
    void theApplicationsMapperIsUsedButItsDefaultTypingIsSwitchedOff() {
        JsonMapper app = JsonMapper.builder().activateDefaultTyping(
                BasicPolymorphicTypeValidator.builder().allowIfSubType(Object.class).build(),
                DefaultTyping.NON_FINAL).build();
        JacksonResultCodec codec = JacksonResultCodec.using(app);
        Probe.INSTANCES.set(0);

        String json = new String(codec.encode(List.of(new Money(BigDecimal.ONE, "EUR")),
                t(new ResultType<List<Money>>() { })), UTF_8);
        assertThat(json).doesNotContain("java.").doesNotContain("dev.idempotency");
        assertThatThrownBy(() -> codec.decode(("[\"" + Probe.class.getName() + "\",{}]").getBytes(UTF_8),
                Money.class)).isInstanceOf(IdempotencyReplayException.class);
        assertThat(Probe.INSTANCES).hasValue(0);
    }

    @Test
    void aUserMapperReachesTheExecutorsCodec() {
        JsonMapper snake = JsonMapper.builder()
                .propertyNamingStrategy(tools.jackson.databind.PropertyNamingStrategies.SNAKE_CASE).build();
        record Named(String firstName) { }
        JacksonResultCodec codec = JacksonResultCodec.using(snake);
        assertThat(new String(codec.encode(new Named("Ada"), Named.class), UTF_8)).isEqualTo("{\"first_name\":\"Ada\"}");
    }

    @Test
    void aDogIsADogAndAnAnimalIsRefusedWithoutTheAllowList() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Dog.class).build();
        byte[] data = codec.encode(new Dog("Rex", true), Animal.class);
        assertThat(codec.decode(data, Animal.class)).isInstanceOf(Dog.class).isEqualTo(new Dog("Rex", true));
        assertThatThrownBy(() -> plain.checkReplayable(Animal.class)).isInstanceOf(IdempotencyReplayException.class);
    }
}
