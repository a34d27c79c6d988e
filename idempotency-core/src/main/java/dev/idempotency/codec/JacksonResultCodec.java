package dev.idempotency.codec;

import dev.idempotency.IdempotencyReplayException;
import java.lang.reflect.Type;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * The default {@link ResultCodec}: JSON through Jackson 3, decoded to the method's declared generic return type
 * ({@code List<Order>} comes back as a list of {@code Order}, a {@code BigDecimal} with its scale). Polymorphic
 * typing is never enabled: nothing in a stored row can choose a class.
 */
public final class JacksonResultCodec implements ResultCodec {

    private final JsonMapper mapper;

    private JacksonResultCodec(JsonMapper mapper) {
        this.mapper = mapper;
    }

    /** A codec on a strict default mapper: unknown properties, trailing tokens and nulls for primitives fail. */
    public static JacksonResultCodec create() {
        return new JacksonResultCodec(defaultMapper());
    }

    /** A codec on the application's own mapper (its modules and naming strategy apply to stored results). */
    public static JacksonResultCodec using(JsonMapper mapper) {
        return new JacksonResultCodec(Objects.requireNonNull(mapper, "mapper"));
    }

    /** The strict mapper {@link #create()} uses. */
    public static JsonMapper defaultMapper() {
        return JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .build();
    }

    /** The mapper in use. */
    public JsonMapper mapper() {
        return mapper;
    }

    @Override
    public byte[] encode(@Nullable Object value, Type declaredType) {
        try {
            if (value == null) {
                return mapper.writeValueAsBytes(null);
            }
            return mapper.writerFor(javaType(declaredType)).writeValueAsBytes(value);
        } catch (JacksonException e) {
            throw new IdempotencyReplayException("cannot record a result of type " + declaredType.getTypeName()
                    + " as JSON: " + e.getOriginalMessage(), e);
        }
    }

    @Override
    public @Nullable Object decode(byte[] data, Type declaredType) {
        if (declaredType == void.class || declaredType == Void.class) {
            return null;
        }
        try {
            return mapper.readValue(data, javaType(declaredType));
        } catch (JacksonException e) {
            throw new IdempotencyReplayException("the recorded result cannot be read back as "
                    + declaredType.getTypeName() + " (was the row changed, or the type since?): "
                    + e.getOriginalMessage(), e);
        }
    }

    private JavaType javaType(Type declaredType) {
        return mapper.getTypeFactory().constructType(declaredType);
    }
}
