package dev.idempotency.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntPredicate;
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
            .build();

    private final JsonMapper canonical;

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
        this.canonical = builder
                .annotationIntrospector(new EveryProperty(builder.annotationIntrospector()))
                .changeDefaultPropertyInclusion(any -> ALWAYS)
                .deactivateDefaultTyping()
                .addModule(sets)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
                .enable(JsonNodeFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
                .build();
    }

    /**
     * @param arguments the call's arguments
     * @param ignored   which positions to leave out
     * @throws IllegalArgumentException if an argument cannot be serialized
     */
    public byte[] fingerprint(Object[] arguments, IntPredicate ignored) {
        return Keys.sha256().digest(canonicalJson(arguments, ignored));
    }

    /** The canonical JSON that {@link #fingerprint} hashes: shown in tests and docs, never stored. */
    public byte[] canonicalJson(Object[] arguments, IntPredicate ignored) {
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
