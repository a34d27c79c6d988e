package dev.idempotency.replay;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.internal.Keys;
import dev.idempotency.replay.ReplayModel.Accepted;
import dev.idempotency.replay.ReplayModel.Card;
import dev.idempotency.replay.ReplayModel.Circle;
import dev.idempotency.replay.ReplayModel.InsufficientFundsException;
import dev.idempotency.replay.ReplayModel.Money;
import dev.idempotency.replay.ReplayModel.Order;
import dev.idempotency.replay.ReplayModel.Outcome;
import dev.idempotency.replay.ReplayModel.Payment;
import dev.idempotency.replay.ReplayModel.Probe;
import dev.idempotency.replay.ReplayModel.ProbeException;
import dev.idempotency.replay.ReplayModel.ProbeOutcome;
import dev.idempotency.replay.ReplayModel.Shape;
import dev.idempotency.replay.ReplayModel.Tagged;
import dev.idempotency.replay.ReplayModel.TaggedValue;
import dev.idempotency.replay.ReplayModel.Verdict;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tampered rows: a completed record whose result was changed (through the SPI's {@code resolve}, as an operator or an
 * attacker with write access to the table could) to other JSON, to garbage, or to a payload naming a class. Every
 * replay is an {@link IdempotencyReplayException}; the method does not run again; the row is left as it was; and no
 * class outside the declared type and the allow-list is instantiated (the probes count their constructors).
 */
public abstract class AbstractTamperedRowTest {

    private static final String PROBE = Probe.class.getName();
    private static final String PROBE_EXCEPTION = ProbeException.class.getName();

    /** A new, empty store for one test. */
    protected abstract IdempotencyStore newStore();

    private IdempotencyStore store;
    private IdempotentExecutor executor;
    private final List<IdempotencyEvent.Outcome> outcomes = new ArrayList<>();

    @BeforeEach
    public void startExecutor() {
        store = newStore();
        executor = IdempotentExecutor.builder(store)
                .codec(AbstractReplayFidelityTest.codec())
                .listener(e -> outcomes.add(e.outcome()))
                .build();
    }

    /** One tampering: the declared type, the value first recorded, and the bytes that replace it. */
    public record Tampering(String name, Type type, Object original, byte[] tampered) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Tampering of(String name, Type type, Object original, String tampered) {
        return new Tampering(name, type, original, tampered.getBytes(UTF_8));
    }

    static Tampering of(String name, Type type, Object original, byte[] tampered) {
        return new Tampering(name, type, original, tampered);
    }

    static byte[] exceptionRow(String json) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0);
        out.writeBytes(json.getBytes(UTF_8));
        return out.toByteArray();
    }

    static final Order ORDER = AbstractReplayFidelityTest.order("o-1");
    static final Money TEN = AbstractReplayFidelityTest.TEN;

    static Stream<Tampering> tamperings() {
        Type mapOfMoney = new ResultType<Map<String, Money>>() { }.type();
        Type listOfOrders = new ResultType<List<Order>>() { }.type();
        Type listOfOutcomes = new ResultType<List<Outcome>>() { }.type();
        Type mapOfOutcomes = new ResultType<Map<String, Outcome>>() { }.type();
        Type optionalOutcome = new ResultType<Optional<Outcome>>() { }.type();
        return Stream.of(
                // other JSON
                of("other JSON: a missing property", Order.class, ORDER, "{\"id\":\"o-1\"}"),
                of("other JSON: an unknown property", Money.class, TEN,
                        "{\"amount\":10.00,\"currency\":\"EUR\",\"admin\":true}"),
                of("other JSON: an array for a record", Order.class, ORDER, "[1,2,3]"),
                of("other JSON: a string for a record", Order.class, ORDER, "\"o-1\""),
                of("other JSON: a number for a string list", listOfOrders, List.of(ORDER), "42"),
                of("other JSON: a trailing value", Money.class, TEN,
                        "{\"amount\":10.00,\"currency\":\"EUR\"} {\"amount\":1}"),
                of("other JSON: null for an int", int.class, 7, "null"),
                of("other JSON: a string for an enum", ReplayModel.Status.class, ReplayModel.Status.NEW,
                        "\"HACKED\""),
                // garbage
                of("garbage: not JSON", Order.class, ORDER, "this is not JSON"),
                of("garbage: truncated", Order.class, ORDER, "{\"id\":\"o-1\",\"status\":\"PA"),
                of("garbage: random bytes", Order.class, ORDER, new byte[] {(byte) 0xFF, (byte) 0xFE, 0x7B, 1, 2}),
                of("garbage: empty", Order.class, ORDER, new byte[0]),
                // payloads naming a class
                of("a class name property", Order.class, ORDER, "{\"@class\":\"" + PROBE + "\",\"id\":\"o-1\"}"),
                of("a java.net.URL class name", Money.class, TEN,
                        "{\"@class\":\"java.net.URL\",\"val\":\"http://attacker.example\"}"),
                of("a default-typing array: HashMap", mapOfMoney, Map.of("a", TEN),
                        "[\"java.util.HashMap\",{\"a\":{\"amount\":1,\"currency\":\"EUR\"}}]"),
                of("a default-typing array: the probe", Order.class, ORDER, "[\"" + PROBE + "\",{}]"),
                of("a class name inside a list", listOfOrders, List.of(ORDER), "[[\"" + PROBE + "\",{}]]"),
                of("an abstract type: an unlisted logical name", Shape.class, new Circle(1.0),
                        "{\"@type\":\"Probe\"}"),
                of("an abstract type: a class name as the logical name", Shape.class, new Circle(1.0),
                        "{\"@type\":\"" + PROBE + "\"}"),
                of("an abstract type: a class property and no logical name", Shape.class, new Circle(1.0),
                        "{\"@class\":\"" + PROBE + "\",\"radius\":1.0}"),
                of("a sealed type: a class name", Payment.class, new Card("4242", TEN),
                        "{\"@type\":\"" + PROBE + "\"}"),
                of("a type whose annotation takes class names: an unlisted class", Tagged.class,
                        new TaggedValue("v"), "{\"@class\":\"" + PROBE + "\"}"),
                of("a type whose annotation takes class names: java.net.URL", Tagged.class,
                        new TaggedValue("v"), "{\"@class\":\"java.net.URL\",\"value\":\"http://x\"}"),
                // an unlisted subtype inside the value: Jackson alone takes a sealed type's permitted subclasses as
                // subtypes, under their default ids
                of("a sealed type: a permitted but unlisted subclass", Outcome.class, new Accepted("a"),
                        "{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}"),
                of("a sealed type in a list: a permitted but unlisted subclass", listOfOutcomes,
                        List.of(new Accepted("a")),
                        "[{\"@type\":\"Accepted\",\"id\":\"a\"},"
                                + "{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}]"),
                of("a sealed type as a map value: a permitted but unlisted subclass", mapOfOutcomes,
                        Map.of("x", new Accepted("a")),
                        "{\"x\":{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}}"),
                of("a sealed type in an optional: a permitted but unlisted subclass", optionalOutcome,
                        Optional.of(new Accepted("a")), "{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}"),
                of("a sealed type in an array: a permitted but unlisted subclass", Outcome[].class,
                        new Outcome[] {new Accepted("a")}, "[{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}]"),
                of("a sealed record component: a permitted but unlisted subclass", Verdict.class,
                        new Verdict("v", new Accepted("a")),
                        "{\"id\":\"v\",\"outcome\":{\"@type\":\"ReplayModel$ProbeOutcome\",\"id\":\"b\"}}"),
                // recorded exceptions
                of("an exception row naming an undeclared exception", Money.class, TEN,
                        exceptionRow("{\"exception\":\"" + PROBE_EXCEPTION + "\",\"message\":\"boom\"}")),
                of("an exception row naming a JDK class", Money.class, TEN,
                        exceptionRow("{\"exception\":\"java.lang.ProcessBuilder\",\"message\":\"/bin/sh\"}")),
                of("an exception row with an extra property", Money.class, TEN,
                        exceptionRow("{\"exception\":\"" + InsufficientFundsException.class.getName()
                                + "\",\"message\":\"m\",\"cause\":{\"@class\":\"" + PROBE + "\"}}")),
                of("an exception row naming a declared class twice", Money.class, TEN,
                        exceptionRow("{\"exception\":\"" + PROBE_EXCEPTION + "\",\"exception\":\""
                                + InsufficientFundsException.class.getName() + "\",\"message\":\"m\"}")),
                of("an exception row that is not JSON", Money.class, TEN, exceptionRow("\u00ff garbage")),
                of("an exception row that is empty", Money.class, TEN, new byte[] {0}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tamperings")
    public void aTamperedRowIsAReplayExceptionTheMethodDoesNotRunAndNothingElseIsBuilt(Tampering t) {
        IdempotentOperation<Object> op = IdempotentOperation
                .builder("Tampered.op", Tier.REVERSIBLE, ResultType.ofType(t.type()))
                .replayExceptions(InsufficientFundsException.class)
                .build();
        String key = "tampered:" + t.name();
        Object[] args = {"same arguments"};
        AtomicInteger runs = new AtomicInteger();
        executor.execute(op, key, args, () -> {
            runs.incrementAndGet();
            return t.original();
        });
        byte[] keyHash = Keys.hash(op.name(), "", Keys.normalize(key));
        IdempotencyRecord original = store.find(keyHash).orElseThrow();
        assertThat(store.resolve(original, t.tampered(), Instant.now().plus(Duration.ofDays(1)))).isTrue();
        IdempotencyRecord tampered = store.find(keyHash).orElseThrow();
        Probe.INSTANCES.set(0);
        ProbeException.INSTANCES.set(0);
        ProbeOutcome.INSTANCES.set(0);
        outcomes.clear();

        assertThatThrownBy(() -> executor.execute(op, key, args, () -> {
            runs.incrementAndGet();
            return t.original();
        }))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("Tampered.op")
                .hasMessageContaining(key);

        assertThat(runs).as("the method did not run again").hasValue(1);
        assertThat(store.find(keyHash)).as("the row is left for an operator to see").contains(tampered);
        assertThat(Probe.INSTANCES).as("no probe was instantiated").hasValue(0);
        assertThat(ProbeException.INSTANCES).as("no probe exception was instantiated").hasValue(0);
        assertThat(ProbeOutcome.INSTANCES).as("no unlisted permitted subclass was instantiated").hasValue(0);
        assertThat(outcomes).containsExactly(IdempotencyEvent.Outcome.FAILED);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tamperings")
    public void theUntamperedRowOfEachCaseReplays(Tampering t) {
        // the control of the test above: the same operation replays when the row is left alone
        IdempotentOperation<Object> op = IdempotentOperation
                .builder("Tampered.op", Tier.REVERSIBLE, ResultType.ofType(t.type()))
                .replayExceptions(InsufficientFundsException.class)
                .build();
        String key = "untampered:" + t.name();
        Object first = executor.execute(op, key, new Object[0], t::original);
        Object replayed = executor.execute(op, key, new Object[0], () -> {
            throw new AssertionError("must replay");
        });
        assertThat(replayed).isEqualTo(first);
        assertThat(outcomes).endsWith(IdempotencyEvent.Outcome.REPLAYED);
    }
}
