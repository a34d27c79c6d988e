package dev.idempotency.mcp;

import dev.idempotency.Tier;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The JSON Schema (2020-12) of a tool's arguments, generated from the record they decode into. A small generator of
 * our own rather than a library: the schema must state exactly what Jackson decodes the arguments into (a record's
 * components, nothing looser), and the one well-kept generator (victools) is built on Jackson 2.
 *
 * <p>A component is required unless it is an {@link Optional} or its type is annotated {@code @Nullable}.
 */
final class InputSchemas {

    private static final Set<String> RESERVED = Set.of(McpMeta.KEY_ARGUMENT, McpMeta.CONFIRMATION_ARGUMENT);

    private InputSchemas() {
    }

    static void requireRecord(Class<?> type, String tool) {
        if (!type.isRecord()) {
            throw new IllegalArgumentException("the arguments of tool '" + tool + "' must be a record (its components"
                    + " are the tool's arguments), but " + type.getName() + " is not");
        }
        for (RecordComponent c : type.getRecordComponents()) {
            if (RESERVED.contains(c.getName())) {
                throw new IllegalArgumentException("the arguments record " + type.getName() + " of tool '" + tool
                        + "' has a component named '" + c.getName() + "', which the MCP adapter fills itself;"
                        + " rename it");
            }
            schema(c.getGenericType(), type.getName() + "." + c.getName());
        }
    }

    /** One argument of a tool: a record component or a method parameter. */
    record Field(String name, Type type, boolean optional) {
    }

    static List<Field> fields(Class<?> record) {
        List<Field> fields = new ArrayList<>();
        for (RecordComponent c : record.getRecordComponents()) {
            fields.add(new Field(c.getName(), c.getGenericType(), optional(c)));
        }
        return fields;
    }

    /** Checks that every field has a schema; {@code where} names the method or record for the message. */
    static void check(List<Field> fields, String where) {
        for (Field f : fields) {
            schema(f.type(), where + "." + f.name());
        }
    }

    /** The tool's input schema: the fields, plus the key and confirmation arguments for its tier. */
    static Map<String, Object> of(List<Field> fields, String where, Tier tier, boolean confirmation) {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        for (Field f : fields) {
            properties.put(f.name(), schema(f.type(), where + "." + f.name()));
            if (!f.optional()) {
                required.add(f.name());
            }
        }
        if (tier != Tier.READ_ONLY) {
            Map<String, Object> key = new LinkedHashMap<>();
            key.put("type", "string");
            key.put("minLength", 1);
            key.put("maxLength", 1024);
            key.put("description", "Idempotency key, set by the client runtime (never by the model): the same"
                    + " value for every retry of one intent. Leave it out to derive the key from the turn id in _meta.");
            key.put("x-mcp-header", McpMeta.KEY_HEADER);
            properties.put(McpMeta.KEY_ARGUMENT, key);
        }
        if (confirmation) {
            properties.put(McpMeta.CONFIRMATION_ARGUMENT, Map.of("type", "string", "description",
                    "The confirmationToken of a confirmation_required result, once the user agreed; send the"
                            + " call again unchanged with it."));
        }
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", properties);
        schema.put("required", required);
        schema.put("additionalProperties", false);
        return schema;
    }

    private static boolean optional(RecordComponent c) {
        return optional(c.getType(), c.getAnnotatedType());
    }

    /** An {@code Optional}, or a type annotated with any {@code @Nullable} (JSpecify's and the others). */
    static boolean optional(Class<?> type, java.lang.reflect.AnnotatedType annotated) {
        return type == Optional.class || Arrays.stream(annotated.getAnnotations())
                .anyMatch(a -> a.annotationType().getSimpleName().equals("Nullable"));
    }

    private static Map<String, Object> schema(Type type, String where) {
        Map<String, Object> s = new LinkedHashMap<>();
        if (type instanceof Class<?> c) {
            if (c == String.class || c == char.class || c == Character.class) {
                s.put("type", "string");
            } else if (c == UUID.class) {
                s.put("type", "string");
                s.put("format", "uuid");
            } else if (c == Instant.class || c == OffsetDateTime.class || c == LocalDateTime.class) {
                s.put("type", "string");
                s.put("format", "date-time");
            } else if (c == LocalDate.class) {
                s.put("type", "string");
                s.put("format", "date");
            } else if (c == Duration.class) {
                s.put("type", "string");
                s.put("format", "duration");
            } else if (c == int.class || c == long.class || c == short.class || c == byte.class || c == Integer.class
                    || c == Long.class || c == Short.class || c == Byte.class || c == BigInteger.class) {
                s.put("type", "integer");
            } else if (c == double.class || c == float.class || c == Double.class || c == Float.class
                    || c == BigDecimal.class) {
                s.put("type", "number");
            } else if (c == boolean.class || c == Boolean.class) {
                s.put("type", "boolean");
            } else if (c.isEnum()) {
                s.put("type", "string");
                s.put("enum", Arrays.stream(c.getEnumConstants()).map(e -> ((Enum<?>) e).name()).toList());
            } else if (c.isArray()) {
                s.put("type", "array");
                s.put("items", schema(c.getComponentType(), where + "[]"));
            } else if (c.isRecord()) {
                Map<String, Object> properties = new LinkedHashMap<>();
                List<String> required = new ArrayList<>();
                for (RecordComponent rc : c.getRecordComponents()) {
                    properties.put(rc.getName(), schema(rc.getGenericType(), c.getName() + "." + rc.getName()));
                    if (!optional(rc)) {
                        required.add(rc.getName());
                    }
                }
                s.put("type", "object");
                s.put("properties", properties);
                s.put("required", required);
                s.put("additionalProperties", false);
            } else {
                throw unsupported(type, where);
            }
            return s;
        }
        if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
            Type[] args = p.getActualTypeArguments();
            if (Collection.class.isAssignableFrom(raw)) {
                s.put("type", "array");
                s.put("items", schema(args[0], where + "[]"));
                if (Set.class.isAssignableFrom(raw)) {
                    s.put("uniqueItems", true);
                }
                return s;
            }
            if (raw == Optional.class) {
                return schema(args[0], where);
            }
            if (Map.class.isAssignableFrom(raw) && args[0] == String.class) {
                s.put("type", "object");
                s.put("additionalProperties", schema(args[1], where + "{}"));
                return s;
            }
        }
        if (type instanceof GenericArrayType g) {
            s.put("type", "array");
            s.put("items", schema(g.getGenericComponentType(), where + "[]"));
            return s;
        }
        throw unsupported(type, where);
    }

    private static IllegalArgumentException unsupported(@Nullable Type type, String where) {
        return new IllegalArgumentException(where + " has type " + type + ", which has no JSON Schema here: use"
                + " strings, numbers, booleans, enums, java.time values, UUID, records, lists, sets, arrays or"
                + " Map<String, V>");
    }
}
