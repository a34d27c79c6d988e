package dev.idempotency.codec;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.annotation.JsonTypeName;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.codec.AllowListTyping.UnlistedTypeException;
import dev.idempotency.internal.UnreplayableTypes;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.MonthDay;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.Year;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.cfg.DateTimeFeature;
import tools.jackson.databind.cfg.JsonNodeFeature;
import tools.jackson.databind.introspect.BeanPropertyDefinition;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.jsontype.BasicPolymorphicTypeValidator;
import tools.jackson.databind.jsontype.NamedType;

/**
 * The default {@link ResultCodec}: JSON through Jackson 3, decoded to the method's declared generic return type
 * ({@code List<Order>} comes back as a list of {@code Order}, a {@code BigDecimal} with its scale, an
 * {@code Optional<Money>}, a {@code java.time} value, a {@code byte[]}).
 *
 * <p><b>Nothing in a stored row chooses a class.</b> Jackson's default typing is switched off on the codec's copy of
 * the mapper, and a {@link BasicPolymorphicTypeValidator} admits only the allow-listed classes wherever a type
 * annotation ({@code @JsonTypeInfo(use = CLASS)}) would otherwise let the row name one. A declared type that is an
 * interface, an abstract class or a sealed interface replays only through that allow-list:
 *
 * <pre>{@code
 * JacksonResultCodec codec = JacksonResultCodec.builder()
 *     .mapper(applicationMapper)
 *     .allowSubtypes(Card.class, BankTransfer.class)   // the concrete replies of a `Payment` return type
 *     .build();
 * }</pre>
 *
 * Each allow-listed class is written under a logical name (its {@link JsonTypeName} or its simple name, never its
 * class name) in an {@code "@type"} property of its abstract supertypes; a replay resolves the name among the
 * allow-listed classes only. Without an allow-listed subtype, {@link #checkReplayable} refuses such a declared type
 * when the method is first seen.
 *
 * <p><b>At every depth.</b> The allow-list applies wherever a type id is written or read, not only to the returned
 * value: list and set elements, array elements, map values, the content of an {@code Optional}, record components
 * and bean properties. {@link #encode} refuses a value holding a class off the allow-list in such a place (with an
 * {@link IdempotencyReplayException} naming the class and where it is), so nothing is recorded; {@link #decode}
 * refuses an id of no allow-listed class, whichever {@code @JsonSubTypes} or sealed {@code permits} list names it,
 * without loading it. A declared type holding an interface or abstract class with no type id (an interface-typed
 * property none of whose implementations is allow-listed) is read back before it is recorded, and refused if that
 * fails.
 *
 * <p>Immutable and thread-safe.
 */
public final class JacksonResultCodec implements ResultCodec {

    /** The property that carries an allow-listed subtype's logical name. */
    public static final String TYPE_PROPERTY = "@type";

    private final JsonMapper mapper;
    private final Set<Class<?>> allowed;
    private final Set<Class<?>> typedSupertypes;
    /** Per declared type: whether it holds an abstract type without type ids, so that a recording is read back. */
    private final Map<Type, Boolean> readBackOnRecord = new ConcurrentHashMap<>();
    /** Per declared type: its Jackson type, writer and reader, made once rather than at every call. */
    private final Map<Type, Bound> bound = new ConcurrentHashMap<>();

    /**
     * A declared type with what encoding and decoding it needs, resolved once, and whether every value decoded as it
     * is deeply immutable ({@link #decodesImmutable}).
     */
    private record Bound(JavaType type, ObjectWriter writer, ObjectReader reader, boolean immutable) {
    }

    /**
     * Final classes whose instances never change: a value of one of these (or a primitive) is the same whoever holds
     * it. {@code BigDecimal} and {@code BigInteger} are not among them: they are not final, so a module's
     * deserializer could build a subclass with state of its own.
     */
    private static final Set<Class<?>> IMMUTABLE_VALUES = Set.of(String.class, Boolean.class, Character.class,
            Byte.class, Short.class, Integer.class, Long.class, Float.class, Double.class, UUID.class, Instant.class,
            LocalDate.class, LocalDateTime.class, LocalTime.class, OffsetDateTime.class, OffsetTime.class,
            ZonedDateTime.class, Duration.class, Period.class, Year.class, YearMonth.class, MonthDay.class,
            ZoneOffset.class);

    private JacksonResultCodec(JsonMapper mapper, Set<Class<?>> allowed, Set<Class<?>> typedSupertypes) {
        this.mapper = mapper;
        this.allowed = allowed;
        this.typedSupertypes = typedSupertypes;
    }

    /** A codec on the strict {@link #defaultMapper()}, with no allow-listed subtypes. */
    public static JacksonResultCodec create() {
        return builder().build();
    }

    /** A codec on the application's own mapper (its modules and naming strategy apply to stored results). */
    public static JacksonResultCodec using(JsonMapper mapper) {
        return builder().mapper(mapper).build();
    }

    /** Starts a codec: a mapper and the allow-list of concrete subtypes. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The strict mapper of {@link #create()}: unknown properties, missing record components or creator properties,
     * trailing tokens and nulls for primitives fail (so that a row changed to other JSON fails loudly rather than
     * replaying a half-empty object); {@code java.time} values keep their zone id and are not shifted to UTC; a
     * {@code JsonNode} result reads decimals exactly, as {@code BigDecimal} with their scale.
     */
    public static JsonMapper defaultMapper() {
        return JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
                .enable(DateTimeFeature.WRITE_DATES_WITH_ZONE_ID)
                .disable(DateTimeFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
                .enable(JsonNodeFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
                .build();
    }

    /** The mapper in use: the given one with default typing off, the allow-list's validator and subtype names. */
    public JsonMapper mapper() {
        return mapper;
    }

    /** The allow-listed concrete subtypes. */
    public Set<Class<?>> allowedSubtypes() {
        return allowed;
    }

    /**
     * Refuses a declared type that cannot be replayed faithfully: one listed in {@link UnreplayableTypes} (streams,
     * iterators, I/O handles, JDBC resources, futures, threads...), {@code Object} or an unresolved type variable
     * (nothing says what to build), and an interface or abstract class outside {@code java.util}'s collections
     * with no allow-listed subtype. Type arguments and array components are checked too.
     */
    @Override
    public void checkReplayable(Type declaredType) {
        refuseTypeVariables(declaredType, declaredType);
        check(mapper.getTypeFactory().constructType(declaredType), declaredType);
    }

    private static void refuseTypeVariables(Type t, Type declared) {
        if (t instanceof TypeVariable<?> v) {
            throw refused(declared, "the type variable " + v.getName() + " is not resolved, so nothing says what a"
                    + " replay must build; declare a concrete return type");
        } else if (t instanceof ParameterizedType p) {
            for (Type a : p.getActualTypeArguments()) {
                refuseTypeVariables(a, declared);
            }
        } else if (t instanceof GenericArrayType g) {
            refuseTypeVariables(g.getGenericComponentType(), declared);
        } else if (t instanceof WildcardType w) {
            for (Type b : w.getUpperBounds()) {
                refuseTypeVariables(b, declared);
            }
        }
    }

    private void check(JavaType t, Type declared) {
        check(t, declared, "", new HashSet<>());
    }

    /**
     * The declared type itself, its type arguments and array components, and (item by item, at every depth) the
     * properties Jackson writes for the application's own classes: so that a {@code Class<?>} or an {@code Object}
     * three records down is refused when the method is first seen, not found by a tampered row or a failing replay.
     *
     * @param path where {@code t} sits inside the declared type ({@code ""} for the type itself)
     */
    private void check(JavaType t, Type declared, String path, Set<JavaType> seen) {
        Class<?> raw = t.getRawClass();
        if (raw == Object.class) {
            throw refused(declared, at(path) + "Object says nothing about what a replay must build (it would come back"
                    + " as maps and lists); declare a concrete type, or JsonNode for free-form JSON");
        }
        Optional<String> why = UnreplayableTypes.reason(raw);
        if (why.isPresent()) {
            throw refused(declared, at(path) + raw.getName() + " cannot be replayed: " + why.get());
        }
        if (t.isArrayType()) {
            check(t.getContentType(), declared, path.isEmpty() ? "" : path + "[]", seen);
            return;
        }
        if (raw.isPrimitive() || raw.isEnum() || JsonNode.class.isAssignableFrom(raw)) {
            return;
        }
        boolean jdkCollection = (t.isCollectionLikeType() || t.isMapLikeType())
                && raw.getPackageName().equals("java.util");
        boolean abstractType = raw.isInterface() || Modifier.isAbstract(raw.getModifiers());
        if (!jdkCollection && abstractType && path.isEmpty()) {
            if (isJdk(raw)) {
                throw refused(declared, "the abstract JDK type " + raw.getName() + " does not say which concrete"
                        + " class a replay must build; declare the concrete type (BigDecimal, String, Instant...)");
            }
            if (allowed.stream().noneMatch(raw::isAssignableFrom)) {
                throw refused(declared, "the " + (raw.isSealed() ? "sealed " : "")
                        + (raw.isInterface() ? "interface " : "abstract class ") + raw.getName()
                        + " can only replay a concrete class from an allow-list, and none of its subtypes is on it;"
                        + " configure JacksonResultCodec.builder().allowSubtypes(...)");
            }
        }
        if (!abstractType && !isJdk(raw) && carriesTypeIds(raw) && allowed.stream().noneMatch(raw::isAssignableFrom)) {
            // the allow-list resolver writes ids for allow-listed classes only: every encode would fail
            throw refused(declared, at(path) + "the class " + raw.getName() + " carries @JsonTypeInfo, so a type id"
                    + " is written for it, and only allow-listed classes have one; allow-list it"
                    + " (JacksonResultCodec.builder().allowSubtypes(" + raw.getSimpleName() + ".class))");
        }
        if (!seen.add(t)) {
            return;
        }
        for (int i = 0; i < t.containedTypeCount(); i++) {
            check(t.containedType(i), declared, path, seen);
        }
        if (t.isContainerType() || t.isReferenceType() || isJdk(raw)) {
            return;
        }
        // an application class: every property Jackson writes, as Jackson sees it (visibility, @JsonIgnore, mixins)
        for (Class<?> c : replayCandidates(raw, abstractType)) {
            JavaType bean = c == raw ? t : mapper.getTypeFactory().constructType(c);
            for (BeanPropertyDefinition property : properties(bean)) {
                check(property.getPrimaryType(), declared,
                        (path.isEmpty() ? raw.getSimpleName() : path) + "." + property.getName(), seen);
            }
        }
    }

    /** The classes whose properties a value of {@code raw} is written with: itself, or its allow-listed subtypes. */
    private java.util.List<Class<?>> replayCandidates(Class<?> raw, boolean abstractType) {
        if (!abstractType) {
            return java.util.List.of(raw);
        }
        return allowed.stream().filter(raw::isAssignableFrom).toList();
    }

    private java.util.List<BeanPropertyDefinition> properties(JavaType bean) {
        try {
            return mapper._serializationContext().introspectBeanDescription(bean).findProperties().stream()
                    .filter(BeanPropertyDefinition::couldSerialize)
                    .toList();
        } catch (RuntimeException e) {
            // a class Jackson cannot introspect fails its first encode with Jackson's own message
            return java.util.List.of();
        }
    }

    private static String at(String path) {
        return path.isEmpty() ? "" : "its property " + path + ": ";
    }

    private static boolean isJdk(Class<?> c) {
        String p = c.getPackageName();
        return p.startsWith("java.") || p.startsWith("javax.") || p.startsWith("jdk.") || p.startsWith("sun.");
    }

    private static IdempotencyReplayException refused(Type declared, String why) {
        return new IdempotencyReplayException("the return type " + declared.getTypeName() + " cannot be replayed: "
                + why);
    }

    @Override
    public byte[] encode(@Nullable Object value, Type declaredType) {
        try {
            if (value == null) {
                return mapper.writeValueAsBytes(null);
            }
            Bound b = bound(declaredType);
            JavaType type = b.type();
            Class<?> raw = type.getRawClass();
            if (raw != value.getClass() && isPolymorphic(raw) && !allowed.contains(value.getClass())) {
                throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                        + ": its class " + value.getClass().getName() + " is not on the codec's allow-list of"
                        + " subtypes, so it could not be replayed");
            }
            byte[] data = b.writer().writeValueAsBytes(value);
            withinReadLimits(data, declaredType);
            if (mayNotReadBack(declaredType, type)) {
                refuseUnreadable(data, declaredType);
            }
            return data;
        } catch (UnlistedTypeException e) {
            throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                    + ": " + e.getOriginalMessage() + at(e), e);
        } catch (JacksonException e) {
            throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                    + " as JSON: " + e.getOriginalMessage() + at(e), e);
        }
    }

    /**
     * Refuses what was written but could never be read: Jackson's {@link StreamReadConstraints} (a number of more than
     * 1,000 digits, a property name of more than 50,000 characters, nesting deeper than 500, and any limit the
     * application's mapper sets) have no write-side twin, so such a value would encode, be recorded, and fail every
     * replay for the whole ttl. The bytes are scanned as tokens (no value is built) with the mapper's own read
     * constraints; a result too small to break any of them is not scanned at all.
     */
    private void withinReadLimits(byte[] data, Type declaredType) {
        StreamReadConstraints limits = mapper.tokenStreamFactory().streamReadConstraints();
        boolean strings = data.length > limits.getMaxStringLength();
        int fewest = Math.min(Math.min(limits.getMaxNumberLength(), limits.getMaxStringLength()),
                Math.min(limits.getMaxNestingDepth(), limits.getMaxNameLength()));
        if (data.length <= fewest && !limits.hasMaxDocumentLength() && !limits.hasMaxTokenCount()) {
            return; // no number, string, name or nesting can exceed its limit in so few bytes
        }
        try (JsonParser parser = mapper.createParser(data)) {
            for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
                if (strings && token == JsonToken.VALUE_STRING) {
                    limits.validateStringLength(parser.getStringLength());
                }
            }
        } catch (JacksonException e) {
            throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                    + ": it would not replay, because Jackson refuses to read it back: " + e.getOriginalMessage()
                    + " (a limit of Jackson's StreamReadConstraints)", e);
        }
    }

    private static String at(JacksonException e) {
        return e.getPath().isEmpty() ? "" : " (at " + e.getPathReference() + ")";
    }

    /**
     * The safety net behind the allow-list: a value whose declared type holds, at any depth (elements, values,
     * properties, the properties of the allow-listed subtypes), an interface or abstract class that carries no type
     * id is read back before it is recorded. Such a property is written as its concrete class without saying which,
     * so it can only replay if the mapper knows how to build it; when it cannot, the value is refused now, before
     * anything is stored, rather than failing every replay for the whole ttl. Types whose subtypes carry the
     * codec's ids are not read back: the id resolver already guarantees that what it writes it reads. Neither are
     * plain types, the common case (reading back costs about as much as writing, and several times more for
     * polymorphic JSON). The answer is computed once per declared type.
     */
    private void refuseUnreadable(byte[] data, Type declaredType) {
        try {
            decode(data, declaredType);
        } catch (IdempotencyReplayException e) {
            throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                    + ": it would not replay, because reading it back fails: " + e.getMessage(), e);
        }
    }

    private boolean mayNotReadBack(Type declaredType, JavaType type) {
        Boolean known = readBackOnRecord.get(declaredType);
        if (known == null) {
            known = holdsUntypedAbstractType(type, new HashSet<>());
            readBackOnRecord.putIfAbsent(declaredType, known);
        }
        return known;
    }

    private boolean holdsUntypedAbstractType(@Nullable JavaType t, Set<JavaType> seen) {
        if (t == null || !seen.add(t)) {
            return false;
        }
        Class<?> raw = t.getRawClass();
        if (raw.isPrimitive() || raw.isEnum() || JsonNode.class.isAssignableFrom(raw)) {
            return false;
        }
        if (t.isArrayType()) {
            return holdsUntypedAbstractType(t.getContentType(), seen);
        }
        boolean container = t.isContainerType() || t.isReferenceType();
        if (!container && (raw.isInterface() || Modifier.isAbstract(raw.getModifiers()))) {
            if (!carriesTypeIds(raw)) {
                return true;
            }
            for (Class<?> sub : allowed) {
                if (raw.isAssignableFrom(sub)
                        && holdsUntypedAbstractType(mapper.getTypeFactory().constructType(sub), seen)) {
                    return true;
                }
            }
            return false;
        }
        for (int i = 0; i < t.containedTypeCount(); i++) {
            if (holdsUntypedAbstractType(t.containedType(i), seen)) {
                return true;
            }
        }
        if (container || isJdk(raw)) {
            return false;
        }
        // a class of the application: the types of its properties (fields, record components, getters)
        for (JavaType c = t; c != null && !isJdk(c.getRawClass()); c = c.getSuperClass()) {
            Class<?> k = c.getRawClass();
            for (Field f : k.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && !Modifier.isTransient(f.getModifiers())
                        && holdsUntypedAbstractType(member(f.getGenericType(), c), seen)) {
                    return true;
                }
            }
            for (Method m : k.getDeclaredMethods()) {
                if (!Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
                        && m.getReturnType() != void.class && !m.isSynthetic()
                        && (m.getName().startsWith("get") || m.getName().startsWith("is"))
                        && holdsUntypedAbstractType(member(m.getGenericReturnType(), c), seen)) {
                    return true;
                }
            }
        }
        return false;
    }

    private JavaType member(Type type, JavaType owner) {
        return mapper.getTypeFactory().resolveMemberType(type, owner.getBindings());
    }

    /** Whether Jackson writes type ids for this class: it or a supertype carries an id-writing {@code @JsonTypeInfo}. */
    private boolean carriesTypeIds(Class<?> raw) {
        Deque<Class<?>> todo = new ArrayDeque<>();
        todo.add(raw);
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            JsonTypeInfo info = c.getAnnotation(JsonTypeInfo.class);
            if (info != null) {
                // DEDUCTION writes no id for the allow-list to check: such a type is read back instead
                return info.use() != JsonTypeInfo.Id.DEDUCTION && info.use() != JsonTypeInfo.Id.NONE;
            }
            if (typedSupertypes.contains(c)) {
                return true;
            }
            if (c.getSuperclass() != null && c.getSuperclass() != Object.class) {
                todo.add(c.getSuperclass());
            }
            todo.addAll(java.util.List.of(c.getInterfaces()));
        }
        return false;
    }

    private static boolean isPolymorphic(Class<?> raw) {
        // an enum whose constants have bodies is abstract, but its constants are not subtypes to choose from
        return !raw.isPrimitive() && !raw.isArray() && !raw.isEnum()
                && (raw.isInterface() || Modifier.isAbstract(raw.getModifiers()))
                && !isJdk(raw) && !JsonNode.class.isAssignableFrom(raw);
    }

    @Override
    public @Nullable Object decode(byte[] data, Type declaredType) {
        if (declaredType == void.class || declaredType == Void.class) {
            return null;
        }
        Object value;
        Bound b = bound(declaredType);
        JavaType type = b.type();
        try {
            value = b.reader().readValue(data);
        } catch (JacksonException e) {
            throw new IdempotencyReplayException("the recorded result cannot be read back as "
                    + declaredType.getTypeName() + " (was the row changed, or the type since?): "
                    + e.getOriginalMessage() + at(e), e);
        }
        if (value == null && type.isPrimitive()) {
            throw new IdempotencyReplayException("the recorded result is null, which the primitive return type "
                    + declaredType.getTypeName() + " cannot hold (was the row changed?)");
        }
        if (value != null && isPolymorphic(type.getRawClass()) && !allowed.contains(value.getClass())) {
            // a subtype named by the user's own @JsonSubTypes, but not allow-listed here: never replayed
            throw new IdempotencyReplayException("the recorded result of type " + declaredType.getTypeName()
                    + " is a " + value.getClass().getName() + ", which is not on the codec's allow-list");
        }
        return value;
    }

    /**
     * True when {@code declaredType} is a primitive, one of {@code String}, the boxed primitives, {@code UUID}, the
     * {@code java.time} values, an enum, or a record without type parameters whose every component is (recursively)
     * such a type: then no caller can change a decoded value at any depth, and one decoded value may stand for the
     * next decode of the same bytes. Anything else (a collection, an array, a bean, a generic record, an abstract
     * type, {@code BigDecimal}) is false.
     */
    @Override
    public boolean decodesImmutable(Type declaredType) {
        return declaredType != void.class && declaredType != Void.class && bound(declaredType).immutable();
    }

    /** Whether values of {@code type} are immutable at every depth; {@code open} holds the records being looked at. */
    private static boolean deeplyImmutable(Type type, Set<Class<?>> open) {
        if (!(type instanceof Class<?> c)) {
            return false; // a parameterized type, a type variable, a generic array
        }
        if (c.isPrimitive() || c.isEnum() || IMMUTABLE_VALUES.contains(c)) {
            return true;
        }
        if (!c.isRecord() || c.getTypeParameters().length > 0 || !open.add(c)) {
            return false; // a record that holds itself is refused rather than reasoned about
        }
        try {
            for (RecordComponent component : c.getRecordComponents()) {
                if (!deeplyImmutable(component.getGenericType(), open)) {
                    return false;
                }
            }
            return true;
        } finally {
            open.remove(c);
        }
    }

    private Bound bound(Type declaredType) {
        Bound b = bound.get(declaredType);
        if (b == null) {
            JavaType type = mapper.getTypeFactory().constructType(declaredType);
            b = new Bound(type, mapper.writerFor(type), mapper.readerFor(type),
                    deeplyImmutable(declaredType, new HashSet<>()));
            bound.putIfAbsent(declaredType, b);
        }
        return b;
    }

    /** The type information that the codec adds to an allow-listed subtype's abstract supertypes. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = TYPE_PROPERTY)
    private interface LogicalTypeName {
    }

    /** Builds a {@link JacksonResultCodec}; {@link #build()} rejects allow-lists that cannot work. */
    public static final class Builder {
        private @Nullable JsonMapper mapper;
        private final Map<String, Class<?>> named = new LinkedHashMap<>();

        private Builder() {
        }

        /** The application's mapper (its modules, naming strategy and features); default {@link #defaultMapper()}. */
        public Builder mapper(JsonMapper mapper) {
            this.mapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        /**
         * Allow-lists concrete classes that a declared interface, abstract class or sealed interface may replay as,
         * each under its {@link JsonTypeName} or, without one, its simple name.
         */
        public Builder allowSubtypes(Class<?>... types) {
            for (Class<?> type : types) {
                Objects.requireNonNull(type, "type");
                JsonTypeName n = type.getAnnotation(JsonTypeName.class);
                allowSubtype(n != null && !n.value().isEmpty() ? n.value() : type.getSimpleName(), type);
            }
            return this;
        }

        /** Allow-lists one concrete class under an explicit logical name (stable across a rename of the class). */
        public Builder allowSubtype(String name, Class<?> type) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
            if (type.isInterface() || Modifier.isAbstract(type.getModifiers()) || type.isPrimitive()
                    || type.isArray()) {
                throw new IllegalArgumentException("allow-list concrete classes only; " + type.getName()
                        + " is not one");
            }
            if (name.isBlank()) {
                throw new IllegalArgumentException("the logical name of " + type.getName() + " is blank");
            }
            Class<?> previous = named.putIfAbsent(name, type);
            if (previous != null && previous != type) {
                throw new IllegalArgumentException("two allow-listed classes share the name '" + name + "': "
                        + previous.getName() + " and " + type.getName()
                        + "; give one a @JsonTypeName or use allowSubtype(name, type)");
            }
            return this;
        }

        public JacksonResultCodec build() {
            JsonMapper base = mapper != null ? mapper : defaultMapper();
            Set<Class<?>> allowed = Set.copyOf(new LinkedHashSet<>(named.values()));
            BasicPolymorphicTypeValidator ptv = BasicPolymorphicTypeValidator.builder()
                    .allowIfSubType((context, clazz) -> allowed.contains(clazz))
                    .build();
            var b = base.rebuild()
                    .deactivateDefaultTyping()
                    .polymorphicTypeValidator(ptv)
                    .addModule(new AllowListTyping(named).module());
            Set<Class<?>> supertypes = abstractSupertypes(allowed);
            for (Class<?> base0 : supertypes) {
                if (!base0.isAnnotationPresent(JsonTypeInfo.class)) {
                    b.addMixIn(base0, LogicalTypeName.class);
                }
            }
            named.forEach((name, type) -> b.registerSubtypes(new NamedType(type, name)));
            return new JacksonResultCodec(b.build(), allowed, supertypes);
        }

        /** The application's interfaces and abstract classes above the allow-listed classes. */
        private static Set<Class<?>> abstractSupertypes(Set<Class<?>> types) {
            Set<Class<?>> result = new LinkedHashSet<>();
            Set<Class<?>> seen = new HashSet<>();
            Deque<Class<?>> todo = new ArrayDeque<>(types);
            while (!todo.isEmpty()) {
                Class<?> c = todo.poll();
                if (!seen.add(c)) {
                    continue;
                }
                if (isPolymorphic(c)) {
                    result.add(c);
                }
                if (c.getSuperclass() != null) {
                    todo.add(c.getSuperclass());
                }
                todo.addAll(java.util.List.of(c.getInterfaces()));
            }
            return result;
        }
    }
}
