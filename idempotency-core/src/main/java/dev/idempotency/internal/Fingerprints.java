package dev.idempotency.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.AnnotationIntrospector;
import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationConfig;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.cfg.JsonNodeFeature;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.AnnotationIntrospectorPair;
import tools.jackson.databind.introspect.NopAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.ValueSerializerModifier;
import tools.jackson.databind.type.CollectionType;

/**
 * The payload fingerprint: SHA-256 of the canonical JSON of a call's arguments (ignored ones left out).
 *
 * <p>Canonical form: the arguments are turned into a JSON tree with the application's mapper (its modules and
 * naming apply), then written with every object's properties sorted by name, at every depth; so a {@code HashMap},
 * a {@code TreeMap} (whatever its comparator) and a {@code LinkedHashMap} with other insertion orders give the same
 * bytes, and so do a record and a POJO with the same properties. The elements of every {@link Set} are written
 * sorted by their own canonical JSON, so a {@code HashSet} and a {@code TreeSet} of equal elements agree. Lists and
 * arrays keep their order. Numbers are written as Jackson writes them, {@code BigDecimal} with its scale
 * ({@code 1.50} and {@code 1.5} differ, as {@code equals} says). The bytes depend on the arguments' JSON form only,
 * never on identity hash codes or iteration order, so they are the same across JVM restarts.
 *
 * <p>Whatever the mapper's inclusion and access settings: every property is written, its value null, empty or
 * default included ({@code NON_NULL}, {@code NON_EMPTY}, {@code NON_DEFAULT} on the mapper, a class or a property do
 * not apply here), and so is a property marked {@code @JsonProperty(access = WRITE_ONLY)} (a password-like field the
 * application never sends back, but which is still part of what the method received): two calls that differ in such
 * a property must not fingerprint alike, or a changed request under a reused key would be replayed.
 *
 * <p>Not canonical: anything the JSON form leaves out or makes up (a {@code @JsonIgnore}d field, a getter computed
 * from the clock), and a map whose different keys serialize to the same text ({@code 1} and {@code "1"}), which is
 * refused.
 */
public final class Fingerprints {

    private static final JsonMapper WRITER = JsonMapper.builder()
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            .addModule(new SimpleModule("idempotency-scalar-arguments")
                    .addSerializer(Scalars.class, new ScalarsSerializer()))
            .build();

    /** The classes whose values {@link #canonicalJson} may write in one pass, when the mapper writes them plainly. */
    private static final Map<Class<?>, List<Object>> SCALAR_PROBES = Map.of(
            String.class, List.of("", "ORDER:k-1", "a\"b\\c/d\n\r\t\b\f\u0000\u0001\u001f\u007f\u0080 \u00e9 \u4e2d \u2028"
                    + "\u2029 \uD83D\uDE00 </script>",
                    // lone surrogates, escaped by the writer today; if ever it failed or replaced them, strings would
                    // take the tree, whose way is the one to keep
                    "\uD800 \uDC00 \uDE00\uD83D x\uDBFF"),
            Integer.class, List.of(0, -1, 7, Integer.MIN_VALUE, Integer.MAX_VALUE),
            Long.class, List.of(0L, -1L, 42L, 1L + Integer.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE),
            Short.class, List.of((short) 0, Short.MIN_VALUE, Short.MAX_VALUE),
            Byte.class, List.of((byte) 0, Byte.MIN_VALUE, Byte.MAX_VALUE),
            Boolean.class, List.of(true, false));

    private final JsonMapper canonical;
    /** The scalar classes that the canonical mapper writes as Jackson's own serializers do (proven at construction). */
    private final Set<Class<?>> plainScalars;
    /** Whether a null argument is written as JSON null. */
    private final boolean plainNull;
    /** Longest string written in one pass: a longer one is left to the tree, which applies the read limits. */
    private final int longestPlainString;

    /** Fingerprints through {@code mapper}'s modules, with sorted properties, map keys and set elements on top. */
    public Fingerprints(JsonMapper mapper) {
        SimpleModule sets = new SimpleModule("idempotency-canonical-sets");
        sets.setSerializerModifier(new ValueSerializerModifier() {
            @Override
            public ValueSerializer<?> modifyCollectionSerializer(SerializationConfig config, CollectionType type,
                    BeanDescription.Supplier description, ValueSerializer<?> serializer) {
                return Set.class.isAssignableFrom(type.getRawClass()) ? new SortedSetSerializer() : serializer;
            }
        });
        var builder = mapper.rebuild();
        this.canonical = readingCanonically(builder
                .annotationIntrospector(new EveryProperty(builder.annotationIntrospector()))
                .changeDefaultPropertyInclusion(any -> ALWAYS)
                .deactivateDefaultTyping()
                .addModule(sets))
                .build();
        var limits = canonical.tokenStreamFactory().streamReadConstraints();
        boolean onePass = !limits.hasMaxDocumentLength() && !limits.hasMaxTokenCount();
        this.longestPlainString = limits.getMaxStringLength();
        this.plainNull = onePass && probe(null, java.util.Arrays.asList((Object) null));
        Set<Class<?>> plain = new java.util.HashSet<>();
        for (Map.Entry<Class<?>, List<Object>> e : SCALAR_PROBES.entrySet()) {
            if (onePass && probe(e.getKey(), e.getValue())) {
                plain.add(e.getKey());
            }
        }
        this.plainScalars = Set.copyOf(plain);
    }

    /**
     * How the fingerprint reads JSON back into the tree it writes sorted: every number with a fraction or an
     * exponent as a {@code BigDecimal}, its scale kept ({@code 19.90} is not {@code 19.9}, as
     * {@code BigDecimal.equals} says, and no two decimals are merged into one {@code double}); a member name twice
     * in one object refused (which of the two would the method have seen?); one document only.
     */
    private static JsonMapper.Builder readingCanonically(JsonMapper.Builder builder) {
        return builder
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
                .enable(JsonNodeFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    private static final JsonMapper READER = readingCanonically(JsonMapper.builder()).build();

    /**
     * Reads a JSON document (a request body) by the rules the fingerprint reads arguments back with, so that a door
     * which fingerprints JSON it received, rather than the objects a method was given, passes the tree as an argument
     * and compares it exactly as {@link #fingerprint} compares a {@code BigDecimal} or a map: numbers with their
     * digits and scale, member order and white space left out.
     *
     * @param json the document, in UTF-8, UTF-16 or UTF-32 (detected as JSON says)
     * @return its tree
     * @throws IllegalArgumentException if {@code json} is not one JSON document, or holds a member name twice in
     *                                  one object, or passes the parser's limits; the message never repeats the
     *                                  document
     */
    public static JsonNode readJson(byte[] json) {
        try {
            return READER.readTree(json);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not one JSON document the fingerprint can read (a syntax error, a "
                    + "member name twice in one object, content after the document, or past the parser's limits)",
                    e);
        }
    }

    /**
     * Whether the canonical mapper writes {@code values} (of {@code type}, or nulls if it is null) as the one-pass
     * writing does: with the serializer Jackson has for the type (no module's own, which could write other values
     * otherwise than the samples), and to the bytes of the tree, all together. Any failure says no: the tree's way of
     * failing is then the one the caller sees.
     */
    private boolean probe(Class<?> type, List<Object> values) {
        try {
            Object[] all = values.toArray();
            if (type != null && !jacksonsOwnSerializer(type)
                    || !java.util.Arrays.equals(onePass(all, NO_POSITION), throughTree(all, NO_POSITION))) {
                return false;
            }
            for (Object value : all) {
                // each alone too: a plain ASCII string is written without Jackson only in a call of such strings
                Object[] one = {value};
                if (!java.util.Arrays.equals(onePass(one, NO_POSITION), throughTree(one, NO_POSITION))) {
                    return false;
                }
            }
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private boolean jacksonsOwnSerializer(Class<?> type) {
        String name = canonical._serializationContext().findValueSerializer(type).getClass().getName();
        return name.equals(switch (type.getSimpleName()) {
            case "String" -> "tools.jackson.databind.ser.jdk.StringSerializer";
            case "Integer" -> "tools.jackson.databind.ser.jdk.NumberSerializers$IntegerSerializer";
            case "Long" -> "tools.jackson.databind.ser.jdk.NumberSerializers$LongSerializer";
            case "Short" -> "tools.jackson.databind.ser.jdk.NumberSerializers$ShortSerializer";
            case "Byte" -> "tools.jackson.databind.ser.jdk.NumberSerializers$IntLikeSerializer";
            case "Boolean" -> "tools.jackson.databind.ser.jdk.BooleanSerializer";
            default -> "";
        });
    }

    private static final IntPredicate NO_POSITION = i -> false;

    /** The classes written in one pass (for tests). */
    Set<Class<?>> onePassClasses() {
        return plainScalars;
    }

    /**
     * @param arguments the call's arguments
     * @param ignored   which positions to leave out
     * @throws IllegalArgumentException if an argument cannot be serialized
     */
    public byte[] fingerprint(Object[] arguments, IntPredicate ignored) {
        if (plain(arguments, ignored)) {
            // the one pass in plain ASCII, digested from this thread's scratch bytes: no array of its own
            Keys.Hasher h = Keys.hasher();
            int n = plainAscii(arguments, ignored, h.scratch);
            if (n >= 0) {
                h.sha.update(h.scratch, 0, n);
                return h.sha.digest();
            }
        }
        return Keys.sha256Of(canonicalJson(arguments, ignored));
    }

    /**
     * The canonical JSON that {@link #fingerprint} hashes: shown in tests and docs, never stored.
     *
     * <p>Arguments that are all strings, whole numbers of at most 64 bits, booleans or null (the usual order number,
     * customer id and amount) are written in one pass, straight to the bytes that the tree would give (the same
     * writer, the same calls): for each such class the constructor proves it on sample values against the tree
     * and checks that the application's mapper writes it with Jackson's own serializer; otherwise, and for every
     * other argument, the JSON goes through the tree.
     */
    public byte[] canonicalJson(Object[] arguments, IntPredicate ignored) {
        return plain(arguments, ignored) ? onePass(arguments, ignored) : throughTree(arguments, ignored);
    }

    /** Whether every kept argument may be written in one pass. */
    private boolean plain(Object[] arguments, IntPredicate ignored) {
        for (int i = 0; i < arguments.length; i++) {
            if (ignored.test(i)) {
                continue;
            }
            Object a = arguments[i];
            if (a == null) {
                if (!plainNull) {
                    return false;
                }
            } else if (!plainScalars.contains(a.getClass())) {
                return false;
            } else if (a instanceof String s && s.length() > longestPlainString) {
                return false; // the tree applies the read limit
            }
        }
        return true;
    }

    private byte[] onePass(Object[] arguments, IntPredicate ignored) {
        byte[] ascii = plainAscii(arguments, ignored);
        if (ascii != null) {
            return ascii;
        }
        try {
            return WRITER.writeValueAsBytes(new Scalars(arguments, ignored));
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the arguments cannot be serialized for the fingerprint: "
                    + e.getOriginalMessage(), e);
        }
    }

    /**
     * The bytes {@link #WRITER} writes for these arguments (the one pass), written here without Jackson when every
     * kept string is printable ASCII that JSON writes as it is (no quote, backslash or slash, nothing below U+0020 or
     * above U+007E): the usual order number and customer id. Numbers, booleans and null are written as Jackson writes
     * them. Null when a string needs escaping: Jackson writes the call then. (The constructor's probes and
     * {@code FingerprintsTest} prove these bytes equal Jackson's.)
     */
    static byte @Nullable [] plainAscii(Object[] arguments, IntPredicate ignored) {
        // at least the JSON's length: the brackets, and each argument with its separator (a number, a boolean or null
        // takes at most 20 characters); plus 20, as the writer gives up on an argument that leaves no room for the
        // widest of them (without it a call of short strings, the probes' samples alone among them, went to Jackson)
        long bound = 2 + 20;
        for (int i = 0; i < arguments.length; i++) {
            bound += 1 + (arguments[i] instanceof String s ? s.length() + 2 : 20);
        }
        if (bound > Integer.MAX_VALUE - 16) {
            return null;
        }
        byte[] json = new byte[(int) bound];
        int n = plainAscii(arguments, ignored, json);
        return n < 0 ? null : java.util.Arrays.copyOf(json, n);
    }

    /**
     * Writes {@link #plainAscii(Object[], IntPredicate)}'s bytes into {@code out}.
     *
     * @return how many bytes, or -1 when a string needs escaping or {@code out} is too small
     */
    static int plainAscii(Object[] arguments, IntPredicate ignored, byte[] out) {
        int at = 0;
        int end = out.length;
        if (end < 2) {
            return -1;
        }
        out[at++] = '[';
        boolean first = true;
        for (int i = 0; i < arguments.length; i++) {
            if (ignored.test(i)) {
                continue;
            }
            // room for a separator, and for any number, boolean or null, and the closing bracket
            if (end - at < 22) {
                return -1;
            }
            if (!first) {
                out[at++] = ',';
            }
            first = false;
            Object a = arguments[i];
            if (a == null) {
                at = ascii(out, at, "null");
            } else if (a instanceof String s) {
                int n = s.length();
                if (end - at < n + 3) {
                    return -1;
                }
                out[at++] = '"';
                for (int c = 0; c < n; c++) {
                    char ch = s.charAt(c);
                    if (ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' || ch == '/') {
                        return -1;
                    }
                    out[at++] = (byte) ch;
                }
                out[at++] = '"';
            } else if (a instanceof Boolean b) {
                at = ascii(out, at, b ? "true" : "false");
            } else if (a instanceof Long l) {
                at = decimal(out, at, l);
            } else {
                at = decimal(out, at, ((Number) a).intValue()); // Integer, Short, Byte, as the serializer writes them
            }
        }
        // no check: '[' and each argument were written only where room for the closing bracket was left after them
        out[at++] = ']';
        return at;
    }

    private static int ascii(byte[] out, int at, String s) {
        for (int i = 0; i < s.length(); i++) {
            out[at++] = (byte) s.charAt(i);
        }
        return at;
    }

    /** {@code Long.toString(value)}'s characters (at most 20) at {@code at}; returns the index after them. */
    private static int decimal(byte[] out, int at, long value) {
        if (value == Long.MIN_VALUE) {
            return ascii(out, at, "-9223372036854775808");
        }
        if (value < 0) {
            out[at++] = '-';
            value = -value;
        }
        int digits = 1;
        for (long v = value; v >= 10; v /= 10) {
            digits++;
        }
        for (int i = at + digits - 1; i >= at; i--) {
            out[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        return at + digits;
    }

    /** The canonical JSON by the general way: written by the canonical mapper, read back as a tree, written sorted. */
    byte[] throughTree(Object[] arguments, IntPredicate ignored) {
        List<Object> kept = new ArrayList<>(arguments.length);
        for (int i = 0; i < arguments.length; i++) {
            if (!ignored.test(i)) {
                kept.add(arguments[i]);
            }
        }
        try {
            // written, then read back as a tree: reading is where two map keys that serialize alike are caught
            JsonNode tree = canonical.readTree(canonical.writeValueAsBytes(kept));
            return WRITER.writeValueAsBytes(tree);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the arguments cannot be serialized for the fingerprint: "
                    + e.getOriginalMessage(), e);
        }
    }

    private static final JsonInclude.Value ALWAYS =
            JsonInclude.Value.construct(JsonInclude.Include.ALWAYS, JsonInclude.Include.ALWAYS);

    /**
     * The application's annotations, less the two that hide what a method received: inclusion rules (every value is
     * written) and {@code WRITE_ONLY} access (the property is written like any other).
     */
    private static final class EveryProperty extends AnnotationIntrospectorPair {
        private static final long serialVersionUID = 1L;

        EveryProperty(AnnotationIntrospector application) {
            super(application, NopAnnotationIntrospector.instance);
        }

        @Override
        public JsonInclude.Value findPropertyInclusion(MapperConfig<?> config, Annotated a) {
            return ALWAYS;
        }

        @Override
        public JsonProperty.Access findPropertyAccess(MapperConfig<?> config, Annotated a) {
            JsonProperty.Access access = super.findPropertyAccess(config, a);
            return access == JsonProperty.Access.WRITE_ONLY ? JsonProperty.Access.AUTO : access;
        }
    }

    /** The kept arguments of a call, all plain scalars: written as the tree of their canonical JSON would be. */
    private record Scalars(Object[] arguments, IntPredicate ignored) {
    }

    /** Makes the calls that writing the tree's array of {@code StringNode}s, {@code IntNode}s... makes. */
    private static final class ScalarsSerializer extends ValueSerializer<Scalars> {
        @Override
        public void serialize(Scalars value, JsonGenerator gen, SerializationContext ctxt) {
            Object[] arguments = value.arguments();
            gen.writeStartArray(value); // the size is a hint that JSON does not write
            for (int i = 0; i < arguments.length; i++) {
                if (value.ignored().test(i)) {
                    continue;
                }
                Object a = arguments[i];
                if (a == null) {
                    gen.writeNull();
                } else if (a instanceof String s) {
                    gen.writeString(s);
                } else if (a instanceof Boolean b) {
                    gen.writeBoolean(b);
                } else if (a instanceof Long l) {
                    gen.writeNumber(l.longValue());
                } else {
                    gen.writeNumber(((Number) a).intValue()); // Integer, Short, Byte: an IntNode in the tree
                }
            }
            gen.writeEndArray();
        }
    }

    /** Writes a set's elements ordered by their canonical JSON, so that its iteration order does not matter. */
    private static final class SortedSetSerializer extends ValueSerializer<Collection<?>> {
        @Override
        public void serialize(Collection<?> value, JsonGenerator gen, SerializationContext ctxt) {
            List<Map.Entry<String, JsonNode>> sorted = new ArrayList<>(value.size());
            for (Object element : value) {
                JsonNode node = ctxt.valueToTree(element);
                sorted.add(Map.entry(WRITER.writeValueAsString(node), node));
            }
            sorted.sort(Map.Entry.comparingByKey());
            gen.writeStartArray(value, sorted.size());
            for (Map.Entry<String, JsonNode> e : sorted) {
                ctxt.writeTree(gen, e.getValue());
            }
            gen.writeEndArray();
        }
    }
}
