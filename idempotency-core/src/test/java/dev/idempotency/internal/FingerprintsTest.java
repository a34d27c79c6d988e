package dev.idempotency.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

class FingerprintsTest {

    static final IntPredicate NONE = i -> false;

    final Fingerprints fingerprints = new Fingerprints(JacksonResultCodec.defaultMapper());

    public record Address(String street, String city) { }

    public record Request(String customer, BigDecimal amount, Map<String, Object> attributes, Set<String> tags,
            List<Address> addresses) { }

    String hex(Object... args) {
        return HexFormat.of().formatHex(fingerprints.fingerprint(args, NONE));
    }

    String json(Object... args) {
        return new String(fingerprints.canonicalJson(args, NONE), UTF_8);
    }

    static Map<String, Object> inOrder(Map<String, Object> target, String... keys) {
        Map<String, Object> source = Map.of("b", 2, "a", 1, "c", Map.of("y", List.of(1, 2), "x", "X"), "d", "D");
        for (String k : keys) {
            target.put(k, source.get(k));
        }
        return target;
    }

    @Test
    void everyMapOrderingGivesTheSameFingerprint() {
        String linked = hex(inOrder(new LinkedHashMap<>(), "a", "b", "c", "d"));
        assertThat(hex(inOrder(new LinkedHashMap<>(), "d", "c", "b", "a"))).isEqualTo(linked);
        assertThat(hex(inOrder(new HashMap<>(), "c", "a", "d", "b"))).isEqualTo(linked);
        assertThat(hex(inOrder(new TreeMap<>(), "b", "d", "a", "c"))).isEqualTo(linked);
        assertThat(hex(inOrder(new TreeMap<>(Comparator.reverseOrder()), "a", "b", "c", "d"))).isEqualTo(linked);
    }

    @Test
    void nestedMapsInRecordsAndListsAreSortedAtEveryDepth() {
        Map<String, Object> inner1 = new LinkedHashMap<>();
        inner1.put("z", 1);
        inner1.put("a", List.of(Map.of("q", 1, "p", 2)));
        Map<String, Object> inner2 = new TreeMap<>(Comparator.reverseOrder());
        inner2.putAll(inner1);

        Request r1 = new Request("c-1", new BigDecimal("9.90"), Map.of("inner", inner1), Set.of("x"), List.of());
        Request r2 = new Request("c-1", new BigDecimal("9.90"), Map.of("inner", inner2), Set.of("x"), List.of());
        assertThat(hex(r1)).isEqualTo(hex(r2));
        assertThat(json(inner2)).isEqualTo("[{\"a\":[{\"p\":2,\"q\":1}],\"z\":1}]");
    }

    @Test
    void setsGiveTheSameFingerprintWhateverTheirIterationOrder() {
        List<String> words = List.of("pear", "apple", "fig", "banana", "kiwi", "cherry");
        Set<String> hash = new HashSet<>(words);
        Set<String> tree = new TreeSet<>(Comparator.reverseOrder());
        tree.addAll(words);
        List<String> backwards = new java.util.ArrayList<>(words);
        Collections.reverse(backwards);
        Set<String> linked = new LinkedHashSet<>(backwards);
        assertThat(hex(hash)).isEqualTo(hex(tree)).isEqualTo(hex(linked));

        Set<Address> records = new LinkedHashSet<>(List.of(new Address("b", "B"), new Address("a", "A")));
        Set<Address> reversed = new LinkedHashSet<>(List.of(new Address("a", "A"), new Address("b", "B")));
        assertThat(hex(records)).isEqualTo(hex(reversed));
    }

    @Test
    void listsKeepTheirOrderAndArgumentsTheirPosition() {
        assertThat(hex(List.of(1, 2))).isNotEqualTo(hex(List.of(2, 1)));
        assertThat(hex("a", "b")).isNotEqualTo(hex("b", "a"));
        assertThat(hex((Object) null)).isNotEqualTo(hex());
        assertThat(hex("1")).isNotEqualTo(hex(1));
    }

    @Test
    void bigDecimalsDifferByScaleAsEqualsSays() {
        assertThat(hex(new BigDecimal("1.50"))).isNotEqualTo(hex(new BigDecimal("1.5")));
        assertThat(json(new BigDecimal("1.50"))).isEqualTo("[1.50]");
    }

    static Object body(String json) {
        return Fingerprints.readJson(json.getBytes(UTF_8));
    }

    @Test
    void aJsonDocumentIsComparedAsTheSameObjectsWouldBe() {
        // every digit counts: these two are one double, and two amounts
        assertThat(hex(body("{\"unitPrice\":12345678.015}")))
                .isNotEqualTo(hex(body("{\"unitPrice\":12345678.0149999999999}")));
        // the scale counts, as for a BigDecimal argument; the notation and the member order do not
        assertThat(hex(body("{\"p\":19.90}"))).isNotEqualTo(hex(body("{\"p\":19.9}")));
        assertThat(hex(body("{\"p\":19.90, \"q\":3}"))).isEqualTo(hex(body("{\"q\":3,\"p\":1.990E1}")))
                .isEqualTo(hex(Map.of("p", new BigDecimal("19.90"), "q", 3)));
        assertThat(hex(body("{\"q\":3}"))).isNotEqualTo(hex(body("{\"q\":3.0}")));
    }

    @Test
    void aJsonDocumentWithAMemberNameTwiceOrMoreThanOneDocumentIsRefused() {
        for (String json : List.of("{\"amount\":1,\"amount\":1000}", "[{\"a\":{\"amount\":1,\"amount\":2}}]",
                "{\"amount\":1} {\"amount\":2}", "{\"amount\":", "not json")) {
            assertThatThrownBy(() -> body(json)).as(json).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageNotContaining("amount");
        }
    }

    @Test
    void ignoredPositionsAreLeftOut() {
        IntPredicate traceId = i -> i == 1;
        assertThat(fingerprints.fingerprint(new Object[] {"order", "trace-1"}, traceId))
                .isEqualTo(fingerprints.fingerprint(new Object[] {"order", "trace-2"}, traceId))
                .isEqualTo(fingerprints.fingerprint(new Object[] {"order"}, NONE));
    }

    @Test
    void keysThatSerializeAlikeAreRefusedRatherThanMerged() {
        Map<Object, Object> clash = new HashMap<>();
        clash.put(1, "int");
        clash.put("1", "string");
        assertThatThrownBy(() -> fingerprints.fingerprint(new Object[] {clash}, NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fingerprint");
    }

    @Test
    void theApplicationsMapperShapesTheCanonicalForm() {
        Fingerprints snake = new Fingerprints(JsonMapper.builder()
                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build());
        record Named(String firstName, String lastName) { }
        assertThat(new String(snake.canonicalJson(new Object[] {new Named("Ada", "Lovelace")}, NONE), UTF_8))
                .isEqualTo("[{\"first_name\":\"Ada\",\"last_name\":\"Lovelace\"}]");
    }

    /**
     * The golden value: computed once and pinned, so a change of canonical form (a Jackson upgrade, a new feature)
     * that would turn every stored key into "reused with different arguments" after a deployment fails here first.
     */
    @Test
    void aFixedArgumentSetHasAPinnedFingerprintAcrossJvmRestarts() {
        Map<String, Object> attributes = new HashMap<>();
        attributes.put("channel", "web");
        attributes.put("priority", 2);
        attributes.put("nested", Map.of("b", true, "a", List.of("x", "y")));
        Request request = new Request("cust-42", new BigDecimal("1234.50"), attributes,
                new HashSet<>(List.of("gift", "express", "fragile")),
                List.of(new Address("1 Main St", "Springfield"), new Address("Rue de l'Église 5", "Zürich")));
        Object[] args = {"APPROVAL-7", request, LocalDate.of(2026, 11, 29), 3L, null, "trace-ignored"};
        IntPredicate ignoreLast = i -> i == 5;

        assertThat(new String(fingerprints.canonicalJson(args, ignoreLast), UTF_8)).isEqualTo(
                "[\"APPROVAL-7\",{\"addresses\":[{\"city\":\"Springfield\",\"street\":\"1 Main St\"},"
                        + "{\"city\":\"Zürich\",\"street\":\"Rue de l'Église 5\"}],\"amount\":1234.50,"
                        + "\"attributes\":{\"channel\":\"web\",\"nested\":{\"a\":[\"x\",\"y\"],\"b\":true},"
                        + "\"priority\":2},\"customer\":\"cust-42\",\"tags\":[\"express\",\"fragile\",\"gift\"]},"
                        + "\"2026-11-29\",3,null]");
        assertThat(HexFormat.of().formatHex(fingerprints.fingerprint(args, ignoreLast)))
                .isEqualTo(GOLDEN);
    }

    static final String GOLDEN = "3dcc4c318c345333fd843c7ba422cc1a2c92cd5b2a50436981e0648f35c344b4";

    @Test
    void throughTheExecutorAReorderedMapReplaysAndAChangedArgumentIsRefusedWithoutThePayload() {
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
        IdempotentOperation<String> op = IdempotentOperation
                .builder("Orders.place", Tier.REVERSIBLE, ResultType.of(String.class))
                .ignoredArguments(1)
                .build();
        AtomicInteger runs = new AtomicInteger();
        Map<String, Object> first = inOrder(new LinkedHashMap<>(), "a", "b", "c", "d");
        Map<String, Object> reordered = inOrder(new HashMap<>(), "d", "c", "b", "a");

        executor.execute(op, "K-1", new Object[] {first, "trace-1"}, () -> "r" + runs.incrementAndGet());
        assertThat(executor.execute(op, "K-1", new Object[] {reordered, "trace-2"},
                () -> "r" + runs.incrementAndGet())).isEqualTo("r1");

        Map<String, Object> changed = inOrder(new HashMap<>(), "a", "b", "c");
        changed.put("d", "jane.doe@example.com");
        assertThatThrownBy(() -> executor.execute(op, "K-1", new Object[] {changed, "trace-3"},
                () -> "r" + runs.incrementAndGet()))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining("Orders.place").hasMessageContaining("K-1")
                .hasMessageNotContaining("jane.doe").hasMessageNotContaining("trace");
        assertThat(runs).hasValue(1);
    }

    /** Scalar arguments are written in one pass: the bytes must be the tree's, or stored fingerprints would move. */
    @Test
    void scalarArgumentsWrittenInOnePassGiveTheTreesBytes() {
        Object[][] calls = {
            {"ORDER:k-1", "customer", 1999L},
            {"", null, Long.MIN_VALUE, Long.MAX_VALUE, Integer.MIN_VALUE, (short) -3, (byte) 7, true, false},
            {"quote \" backslash \\ slash / controls \n\r\t\b\f\u0000\u001f\u007f latin \u00e9 cjk \u4e2d \u2028"},
            {"</script>", 0, -0L, 2147483648L},
            {},
            {(Object) null},
        };
        assertThat(fingerprints.onePassClasses()).containsExactlyInAnyOrder(String.class, Integer.class, Long.class,
                Short.class, Byte.class, Boolean.class);
        for (Object[] call : calls) {
            assertThat(fingerprints.canonicalJson(call, NONE)).as(java.util.Arrays.toString(call))
                    .isEqualTo(fingerprints.throughTree(call, NONE));
        }
        IntPredicate second = i -> i == 1;
        Object[] call = {"a", "left out", 5L};
        assertThat(new String(fingerprints.canonicalJson(call, second), UTF_8)).isEqualTo("[\"a\",5]")
                .isEqualTo(new String(fingerprints.throughTree(call, second), UTF_8));
    }

    /**
     * Calls of printable ASCII strings, numbers, booleans and nulls are written without Jackson: the bytes must be the
     * tree's for any of them (random calls of every printable character, escaped ones included, which go to Jackson).
     */
    @Test
    void callsWrittenWithoutJacksonGiveTheTreesBytes() {
        java.util.Random random = new java.util.Random(11);
        Object[] scalars = {null, true, false, 0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0L, Long.MIN_VALUE,
            Long.MAX_VALUE, (short) -7, (byte) 127, ""};
        int withoutJackson = 0;
        for (int n = 0; n < 2_000; n++) {
            Object[] call = new Object[random.nextInt(5)];
            for (int i = 0; i < call.length; i++) {
                if (random.nextInt(4) == 0) {
                    // whole numbers of every length and sign
                    long wide = random.nextLong() >> random.nextInt(64);
                    call[i] = random.nextBoolean() ? (Object) wide : (Object) (int) wide;
                } else if (random.nextBoolean()) {
                    call[i] = scalars[random.nextInt(scalars.length)];
                } else {
                    StringBuilder s = new StringBuilder();
                    for (int c = random.nextInt(12); c > 0; c--) {
                        s.append((char) (0x20 + random.nextInt(0x5f))); // U+0020 to U+007E
                    }
                    call[i] = s.toString();
                }
            }
            IntPredicate ignored = call.length > 1 && random.nextBoolean() ? i -> i == 1 : NONE;
            byte[] tree = fingerprints.throughTree(call, ignored);
            assertThat(fingerprints.canonicalJson(call, ignored)).as(java.util.Arrays.toString(call)).isEqualTo(tree);
            assertThat(fingerprints.fingerprint(call, ignored))
                    .as("the fingerprint of %s", java.util.Arrays.toString(call)).isEqualTo(Keys.sha256Of(tree));
            byte[] plain = Fingerprints.plainAscii(call, ignored);
            if (plain != null) {
                withoutJackson++;
                assertThat(plain).as(java.util.Arrays.toString(call)).isEqualTo(tree);
            }
        }
        assertThat(withoutJackson).as("calls written without Jackson").isGreaterThan(500);
        // longer than the thread's scratch bytes: written the other way, the same fingerprint
        Object[] longCall = {"x".repeat(5_000), 7L, "y".repeat(1_500)};
        assertThat(fingerprints.fingerprint(longCall, NONE))
                .isEqualTo(Keys.sha256Of(fingerprints.throughTree(longCall, NONE)));
        assertThat(Fingerprints.plainAscii(new Object[] {"a/b"}, NONE)).isNull();
        assertThat(Fingerprints.plainAscii(new Object[] {"caf\u00e9"}, NONE)).isNull();
        assertThat(Fingerprints.plainAscii(new Object[] {"tab\t"}, NONE)).isNull();
        assertThat(new String(Fingerprints.plainAscii(new Object[] {"ORDER:k-1", 5L, null, true, (short) 3}, NONE),
                UTF_8)).isEqualTo("[\"ORDER:k-1\",5,null,true,3]");
    }

    @Test
    void aMapperThatWritesScalarsItsOwnWayIsFollowed() {
        JsonMapper longsAsText = JsonMapper.builder()
                .addModule(new tools.jackson.databind.module.SimpleModule()
                        .addSerializer(Long.class, new tools.jackson.databind.ser.std.ToStringSerializer(Long.class)))
                .build();
        Fingerprints f = new Fingerprints(longsAsText);
        assertThat(f.onePassClasses()).contains(String.class).doesNotContain(Long.class);
        Object[] call = {"k", 5L, 6};
        assertThat(new String(f.canonicalJson(call, NONE), UTF_8)).isEqualTo("[\"k\",\"5\",6]");
    }

    @Test
    void aLoneSurrogateFailsAsTheTreeFailsIt() {
        Object[] call = {"a\uD800b"};
        byte[] tree;
        try {
            tree = fingerprints.throughTree(call, NONE);
        } catch (IllegalArgumentException e) {
            assertThatThrownBy(() -> fingerprints.canonicalJson(call, NONE))
                    .isInstanceOf(IllegalArgumentException.class);
            return;
        }
        assertThat(fingerprints.canonicalJson(call, NONE)).isEqualTo(tree);
    }

    /** canonicalJson, which takes the one pass for scalars, must give the general path's bytes for every input. */
    void assertSameAsTree(Fingerprints f, Object[]... calls) {
        for (Object[] call : calls) {
            assertThat(new String(f.canonicalJson(call, NONE), UTF_8)).as(java.util.Arrays.toString(call))
                    .isEqualTo(new String(f.throughTree(call, NONE), UTF_8));
        }
    }

    @Test
    void everyScalarEdgeGivesTheGeneralPathsBytes() {
        String emoji = "\uD83D\uDE00";
        assertSameAsTree(fingerprints,
                new Object[] {emoji, "a" + emoji + "b", emoji.repeat(1000)},
                new Object[] {"lone \uD800 high", "\uDC00 lone low", "reversed \uDE00\uD83D", "end\uDBFF"},
                new Object[] {"x".repeat(200_000), "\u00e9\u4e2d".repeat(50_000)},
                new Object[] {-1, -1L, (short) -1, (byte) -1, Long.MIN_VALUE + 1, Integer.MAX_VALUE + 1L, 0L},
                new Object[] {Boolean.TRUE, null, Boolean.FALSE, null},
                // mixes that must take the general path: the scalars around them are written the same
                new Object[] {"k", 1L, new BigDecimal("10.00")},
                new Object[] {null, List.of(1, 2), "k"},
                new Object[] {"k", Map.of("b", 1, "a", 2), 3},
                new Object[] {1.5d, 'c', 2.5f, new java.math.BigInteger("123456789012345678901234567890")});
        assertThat(json("k", 1L, new BigDecimal("10.00"))).isEqualTo("[\"k\",1,10.00]");
        assertThat(json(null, List.of(1, 2), "k")).isEqualTo("[null,[1,2],\"k\"]");
    }

    /** A String serializer that trims: it writes the sample values untouched, so only its class gives it away. */
    static final class Trimming extends tools.jackson.databind.ser.std.StdSerializer<String> {
        Trimming() {
            super(String.class);
        }

        @Override
        public void serialize(String value, tools.jackson.core.JsonGenerator gen,
                tools.jackson.databind.SerializationContext ctxt) {
            gen.writeString(value.strip());
        }
    }

    @Test
    void aMapperWithItsOwnStringSerializerIsFollowedEvenWhereItAgreesWithJackson() {
        Fingerprints f = new Fingerprints(JsonMapper.builder()
                .addModule(new tools.jackson.databind.module.SimpleModule().addSerializer(String.class, new Trimming()))
                .build());
        assertThat(f.onePassClasses()).doesNotContain(String.class).contains(Long.class);
        assertThat(new String(f.canonicalJson(new Object[] {"  K-1 ", 5L}, NONE), UTF_8)).isEqualTo("[\"K-1\",5]");
        assertThat(f.fingerprint(new Object[] {"  K-1 ", 5L}, NONE))
                .isEqualTo(f.fingerprint(new Object[] {"K-1", 5L}, NONE));
    }

    @Test
    void aMapperThatWritesNumbersAsStringsIsFollowed() {
        Fingerprints f = new Fingerprints(JsonMapper.builder()
                .enable(tools.jackson.core.json.JsonWriteFeature.WRITE_NUMBERS_AS_STRINGS).build());
        assertThat(f.onePassClasses()).containsExactlyInAnyOrder(String.class, Boolean.class);
        Object[] call = {7, 8L, (short) 9, (byte) 10, true, "k"};
        assertThat(new String(f.canonicalJson(call, NONE), UTF_8)).isEqualTo("[\"7\",\"8\",\"9\",\"10\",true,\"k\"]");
        assertSameAsTree(f, call);
    }

    /** A mapper whose null value serializer is {@code write}. */
    static JsonMapper writingNull(java.util.function.Consumer<tools.jackson.core.JsonGenerator> write) {
        return JsonMapper.builder().addModule(new tools.jackson.databind.module.SimpleModule()
                .setDefaultNullValueSerializer(new tools.jackson.databind.ser.std.StdSerializer<Object>(Object.class) {
                    @Override
                    public void serialize(Object value, tools.jackson.core.JsonGenerator gen,
                            tools.jackson.databind.SerializationContext ctxt) {
                        write.accept(gen);
                    }
                })).build();
    }

    @Test
    void aMapperThatWritesNullItsOwnWayIsFollowed() {
        Fingerprints f = new Fingerprints(writingNull(gen -> gen.writeString("")));
        assertThat(new String(f.canonicalJson(new Object[] {"k", null}, NONE), UTF_8)).isEqualTo("[\"k\",\"\"]");
        assertThat(new String(f.canonicalJson(new Object[] {null, 1L}, NONE), UTF_8)).isEqualTo("[\"\",1]");
    }

    @Test
    void aMapperThatRefusesNullsRefusesThemInTheFingerprintToo() {
        Fingerprints f = new Fingerprints(writingNull(gen -> {
            throw new IllegalStateException("nulls are not written by this application");
        }));
        assertThatThrownBy(() -> f.fingerprint(new Object[] {"k", null}, NONE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nulls are not written");
        assertThat(new String(f.canonicalJson(new Object[] {"k", 1L}, NONE), UTF_8)).isEqualTo("[\"k\",1]");
    }

    static JsonMapper limited(tools.jackson.core.StreamReadConstraints constraints) {
        return JsonMapper.builder(tools.jackson.core.json.JsonFactory.builder()
                .streamReadConstraints(constraints).build()).build();
    }

    @Test
    void theMappersDocumentAndTokenLimitsApplyToScalarArgumentsToo() {
        for (JsonMapper mapper : List.of(
                limited(tools.jackson.core.StreamReadConstraints.builder().maxDocumentLength(40).build()),
                limited(tools.jackson.core.StreamReadConstraints.builder().maxTokenCount(10).build()))) {
            Fingerprints f = new Fingerprints(mapper);
            assertThat(f.onePassClasses()).isEmpty();
            assertThat(new String(f.canonicalJson(new Object[] {"k", null, 1L}, NONE), UTF_8))
                    .isEqualTo("[\"k\",null,1]");
            Object[] nulls = new Object[20];
            assertThatThrownBy(() -> f.fingerprint(nulls, NONE)).isInstanceOf(IllegalArgumentException.class);
            Object[] strings = java.util.Collections.nCopies(20, "k").toArray();
            assertThatThrownBy(() -> f.fingerprint(strings, NONE)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aStringLongerThanTheMappersLimitIsRefusedAsTheGeneralPathRefusesIt() {
        Fingerprints f = new Fingerprints(limited(
                tools.jackson.core.StreamReadConstraints.builder().maxStringLength(100).build()));
        assertThat(f.onePassClasses()).contains(String.class);
        assertThat(new String(f.canonicalJson(new Object[] {"k".repeat(100)}, NONE), UTF_8))
                .isEqualTo("[\"" + "k".repeat(100) + "\"]");
        assertThatThrownBy(() -> f.fingerprint(new Object[] {"k".repeat(101)}, NONE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fingerprint");
        assertThatThrownBy(() -> f.fingerprint(new Object[] {1L, "k".repeat(101)}, NONE))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Plain ASCII arguments are digested from the thread's scratch bytes, with no allocation but the 32-byte result,
     * up to a call whose JSON fills them exactly, its last string or its last 20-character number reaching the last
     * byte; one byte more and they are written the other way. On both sides of the edge the fingerprint is the
     * general path's.
     */
    @Test
    void callsAtTheEdgeOfTheScratchBytesGiveTheTreesFingerprint() {
        int scratch = Keys.Hasher.SCRATCH;
        for (int size = scratch - 2; size <= scratch + 3; size++) {
            Object[][] calls = {
                {"x".repeat(size - 4)},                             // ["x...x"]
                {null, "x".repeat(size - 9)},                       // [null,"x...x"]
                {"x".repeat(size - 25), Long.MIN_VALUE},            // ["x...x",-9223372036854775808]
                {"x".repeat(size - 9), true},                       // ["x...x",true]
            };
            for (Object[] call : calls) {
                byte[] tree = fingerprints.throughTree(call, NONE);
                assertThat(tree).as("the JSON's length").hasSize(size);
                String what = "a call of " + size + " bytes ending in " + call[call.length - 1].toString().charAt(0);
                assertThat(fingerprints.fingerprint(call, NONE)).as(what).isEqualTo(Keys.sha256Of(tree));
                if (size <= scratch && call[call.length - 1] != Boolean.TRUE) {
                    assertThat(Allocation.perRun(() -> fingerprints.fingerprint(call, NONE))).as(what)
                            .isLessThanOrEqualTo(Allocation.DIGEST_ONLY);
                }
            }
        }
        Object[] usual = {"ORDER:k-1", "customer-42", 1999L, 3, true, null};
        assertThat(Allocation.perRun(() -> fingerprints.fingerprint(usual, NONE))).as("the usual call")
                .isLessThanOrEqualTo(Allocation.DIGEST_ONLY);
    }

    /**
     * Into a buffer of any size the one pass writes the exact bytes, or says -1 and the caller takes the other way:
     * never a partial write, never an overflow. A call whose last argument fills the room kept for the widest value
     * fits a buffer of exactly its length; any call fits one of its length and 20 bytes more.
     */
    @Test
    void theOnePassWritesIntoABufferOfAnySizeOrSaysItDoesNotFit() {
        Object[][] exactly = {{}, {"x".repeat(30)}, {null, "x".repeat(19)}, {"x".repeat(30), Long.MIN_VALUE},
            {(byte) 1, "y", Integer.MIN_VALUE, Long.MIN_VALUE}};
        Object[][] loosely = {{"k", 1L, true}, {"a", "b"}, {null}, {(short) 5}};
        for (Object[][] calls : new Object[][][] {exactly, loosely}) {
            for (Object[] call : calls) {
                byte[] json = fingerprints.throughTree(call, NONE);
                for (int size = 0; size <= json.length + 22; size++) {
                    byte[] out = new byte[size];
                    int n = Fingerprints.plainAscii(call, NONE, out);
                    String what = java.util.Arrays.toString(call) + " into " + size + " bytes";
                    if (size < json.length) {
                        assertThat(n).as(what).isEqualTo(-1);
                    } else if (calls == exactly || size >= json.length + 20) {
                        assertThat(n).as(what).isEqualTo(json.length);
                    }
                    if (n >= 0) {
                        assertThat(java.util.Arrays.copyOf(out, n)).as(what).isEqualTo(json);
                    }
                }
            }
        }
    }

    /**
     * U+0020 and U+007E, the ends of what is written as it is, are written without Jackson; their neighbours, the
     * characters JSON escapes and any non-ASCII character, first or last in a string, send the call to Jackson: the
     * same bytes and fingerprint as the tree either way.
     */
    @Test
    void thePrintableAsciiEdgesAreWrittenAsTheyAreAndTheirNeighboursByJackson() {
        for (String s : List.of(" ", "~", " order ~", "~" + "x".repeat(100) + " ")) {
            Object[] call = {"k", s, 5L};
            assertThat(Fingerprints.plainAscii(call, NONE)).as("[%s]", s)
                    .isEqualTo(fingerprints.throughTree(call, NONE));
        }
        for (char c : new char[] {'\u001f', '\u007f', '\u0080', '\u00e9', '\u4e2d', '"', '\\', '/'}) {
            for (String s : List.of(c + "order-1", "order-1" + c, String.valueOf(c))) {
                Object[] call = {"k", s, 5L};
                byte[] tree = fingerprints.throughTree(call, NONE);
                String what = String.format("U+%04X in [%s]", (int) c, s);
                assertThat(Fingerprints.plainAscii(call, NONE)).as(what).isNull();
                assertThat(fingerprints.canonicalJson(call, NONE)).as(what).isEqualTo(tree);
                assertThat(fingerprints.fingerprint(call, NONE)).as(what).isEqualTo(Keys.sha256Of(tree));
            }
        }
    }

    /**
     * A call of short strings alone, such as each String sample the constructor proves against the tree, is written
     * without Jackson too (the array was once sized for the JSON alone, which left the writer no room for them).
     */
    @Test
    void aCallOfShortStringsAloneIsWrittenWithoutJackson() {
        Object[] letters = "abcdefghijkl".split("");
        IntPredicate third = i -> i == 2;
        assertThat(new String(Fingerprints.plainAscii(letters, third), UTF_8))
                .isEqualTo("[\"a\",\"b\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\"]")
                .isEqualTo(new String(fingerprints.throughTree(letters, third), UTF_8));
        for (Object[] call : new Object[][] {{""}, {"ORDER:k-1"}, {"a", "b"}, {"", "", "", ""}}) {
            assertThat(Fingerprints.plainAscii(call, NONE)).as(java.util.Arrays.toString(call))
                    .isEqualTo(fingerprints.throughTree(call, NONE));
        }
    }
}
