package dev.idempotency.codec;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.core.Version;
import tools.jackson.databind.DatabindContext;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.JacksonModule;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.AnnotatedClass;
import tools.jackson.databind.introspect.NopAnnotationIntrospector;
import tools.jackson.databind.jsontype.NamedType;
import tools.jackson.databind.jsontype.PolymorphicTypeValidator;
import tools.jackson.databind.jsontype.TypeIdResolver;
import tools.jackson.databind.jsontype.impl.StdTypeResolverBuilder;
import tools.jackson.databind.jsontype.impl.TypeIdResolverBase;

/**
 * Puts the codec's allow-list on every type id that Jackson writes or reads, at any depth: the declared type, the
 * elements of a list, an array or an {@code Optional}, the values of a map, the properties of a record or a bean.
 *
 * <p>An annotation introspector, first in the mapper's chain, gives every type that carries type information (the
 * codec's {@code @type} mixin, or the application's own {@code @JsonTypeInfo}) a type resolver builder whose
 * {@link TypeIdResolver} knows only the allow-listed classes: writing a value of any other class, or reading an id
 * that is not one of theirs, is an {@link UnlistedTypeException}. Reading never asks Jackson's own resolvers, so
 * neither {@code @JsonSubTypes}, nor the permitted subclasses of a sealed type, nor a class name in a row can bring in
 * another class, and no class is loaded by name. A {@code defaultImpl} (used when a row has no type id) is kept only
 * if it is allow-listed or the declared type itself.
 */
final class AllowListTyping {

    private final Map<String, Class<?>> byName;
    private final Map<Class<?>, String> nameOf = new HashMap<>();

    AllowListTyping(Map<String, Class<?>> named) {
        this.byName = Map.copyOf(named);
        named.forEach((name, type) -> nameOf.putIfAbsent(type, name));
    }

    Set<Class<?>> classes() {
        return nameOf.keySet();
    }

    /** The module that installs the allow-list's introspector in front of the mapper's own. */
    JacksonModule module() {
        AllowListTyping typing = this;
        return new JacksonModule() {
            @Override
            public String getModuleName() {
                return "idempotency-result-codec-allow-list";
            }

            @Override
            public Version version() {
                return Version.unknownVersion();
            }

            @Override
            public Object getRegistrationId() {
                // one per mapper: a codec built on another codec's mapper replaces its allow-list
                return getModuleName();
            }

            @Override
            public void setupModule(SetupContext context) {
                context.insertAnnotationIntrospector(new Introspector(typing));
            }
        };
    }

    /** A refused type id: a class off the allow-list being written, or an id of no allow-listed class being read. */
    static final class UnlistedTypeException extends DatabindException {
        private static final long serialVersionUID = 1L;

        UnlistedTypeException(String message) {
            super(message);
        }
    }

    private static final class Introspector extends NopAnnotationIntrospector {
        private static final long serialVersionUID = 1L;
        private final transient AllowListTyping typing;

        Introspector(AllowListTyping typing) {
            this.typing = typing;
        }

        @Override
        public Object findTypeResolverBuilder(MapperConfig<?> config, Annotated ann) {
            JsonTypeInfo.Value info = config.getAnnotationIntrospector().findPolymorphicTypeInfo(config, ann);
            if (info == null || info.getIdType() == JsonTypeInfo.Id.NONE) {
                return null;
            }
            // replaces any @JsonTypeResolver too: no builder of the application's may bypass the allow-list
            return new Builder(typing, ann instanceof AnnotatedClass);
        }
    }

    private static final class Builder extends StdTypeResolverBuilder {
        private final AllowListTyping typing;
        private final boolean classLevel;

        Builder(AllowListTyping typing, boolean classLevel) {
            this.typing = typing;
            this.classLevel = classLevel;
        }

        private Builder(Builder base, Class<?> defaultImpl) {
            super(base, defaultImpl);
            this.typing = base.typing;
            this.classLevel = base.classLevel;
        }

        @Override
        public StdTypeResolverBuilder withDefaultImpl(Class<?> defaultImpl) {
            return _defaultImpl == defaultImpl ? this : new Builder(this, defaultImpl);
        }

        @Override
        public StdTypeResolverBuilder withSettings(JsonTypeInfo.Value settings) {
            // as Jackson's own builder does: an external property only makes sense on a property, not a class
            if (classLevel && settings.getInclusionType() == JsonTypeInfo.As.EXTERNAL_PROPERTY) {
                settings = settings.withInclusionType(JsonTypeInfo.As.PROPERTY);
            }
            return super.withSettings(settings);
        }

        @Override
        protected TypeIdResolver idResolver(DatabindContext ctxt, JavaType baseType,
                PolymorphicTypeValidator subtypeValidator, Collection<NamedType> subtypes, boolean forSer,
                boolean forDeser) {
            JsonTypeInfo.Id mechanism = _customIdResolver != null ? JsonTypeInfo.Id.CUSTOM : _idType;
            // names are the allow-list's own; other ids (class names...) are computed by Jackson's resolver, for
            // the allow-listed classes only
            TypeIdResolver ids = mechanism == JsonTypeInfo.Id.NAME ? null
                    : super.idResolver(ctxt, baseType, subtypeValidator, subtypes, true, false);
            return new Resolver(typing, baseType, mechanism, ids, ctxt);
        }

        @Override
        protected JavaType defineDefaultImpl(DatabindContext ctxt, JavaType baseType) {
            JavaType impl = super.defineDefaultImpl(ctxt, baseType);
            if (impl == null || typing.classes().contains(impl.getRawClass())
                    || (!baseType.isAbstract() && impl.hasRawClass(baseType.getRawClass()))) {
                return impl;
            }
            return null;
        }
    }

    private static final class Resolver extends TypeIdResolverBase {
        private final JsonTypeInfo.Id mechanism;
        private final Map<Class<?>, String> classToId = new HashMap<>();
        private final Map<String, Class<?>> idToClass = new HashMap<>();

        Resolver(AllowListTyping typing, JavaType baseType, JsonTypeInfo.Id mechanism, TypeIdResolver ids,
                DatabindContext ctxt) {
            super(baseType);
            this.mechanism = mechanism;
            for (Class<?> type : typing.classes()) {
                if (!baseType.getRawClass().isAssignableFrom(type)) {
                    continue;
                }
                String id;
                if (ids == null) {
                    id = typing.nameOf.get(type);
                } else {
                    try {
                        id = ids.idFromValueAndType(ctxt, null, type);
                    } catch (RuntimeException e) {
                        id = null; // a custom resolver that needs a value: that class cannot be read back
                    }
                }
                if (id != null) {
                    classToId.put(type, id);
                    idToClass.putIfAbsent(id, type);
                }
            }
        }

        @Override
        public String idFromValue(DatabindContext ctxt, Object value) {
            return idFor(value.getClass());
        }

        @Override
        public String idFromValueAndType(DatabindContext ctxt, Object value, Class<?> suggestedType) {
            return idFor(value != null ? value.getClass() : suggestedType);
        }

        private String idFor(Class<?> type) {
            Class<?> c = type;
            if (!c.isEnum() && c.getSuperclass() != null && c.getSuperclass().isEnum()) {
                c = c.getSuperclass(); // a constant with a body: Jackson writes its enum class
            }
            String id = classToId.get(c);
            if (id == null) {
                throw new UnlistedTypeException("its class " + type.getName() + " (written as a "
                        + _baseType.getRawClass().getName() + ") is not on the codec's allow-list of subtypes, so"
                        + " it could not be replayed");
            }
            return id;
        }

        @Override
        public JavaType typeFromId(DatabindContext ctxt, String id) {
            Class<?> c = idToClass.get(id);
            if (c == null) {
                String shown = id.length() > 120 ? id.substring(0, 120) + "..." : id;
                throw new UnlistedTypeException("the type id '" + shown + "' (for a "
                        + _baseType.getRawClass().getName() + ") names no class on the codec's allow-list; known: "
                        + getDescForKnownTypeIds());
            }
            return ctxt.constructType(c);
        }

        @Override
        public String getDescForKnownTypeIds() {
            return new TreeSet<>(idToClass.keySet()).toString();
        }

        @Override
        public JsonTypeInfo.Id getMechanism() {
            return mechanism;
        }
    }
}
