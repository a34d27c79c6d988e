package dev.idempotency;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.Objects;

/**
 * The declared type of an operation's result, generics included, so that a replay returns a {@code List<Order>} and
 * not a list of maps. Capture a generic type with an anonymous subclass:
 * {@code new ResultType<List<Order>>() {}}; a plain class with {@link #of(Class)}.
 *
 * @param <T> the result type
 */
public abstract class ResultType<T> {

    private final Type type;

    /** Captures the type argument of the anonymous subclass. */
    protected ResultType() {
        Type superclass = getClass().getGenericSuperclass();
        if (!(superclass instanceof ParameterizedType p)) {
            throw new IllegalStateException("ResultType must be created with a type argument: new ResultType<X>() {}");
        }
        this.type = p.getActualTypeArguments()[0];
    }

    private ResultType(Type type) {
        this.type = Objects.requireNonNull(type, "type");
    }

    /** The type of a plain class (or {@code void.class}). */
    public static <T> ResultType<T> of(Class<T> type) {
        return new ResultType<>(type) { };
    }

    /** Any reflected type, such as {@link java.lang.reflect.Method#getGenericReturnType()}. */
    public static ResultType<Object> ofType(Type type) {
        return new ResultType<>(type) { };
    }

    public Type type() {
        return type;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ResultType<?> other && type.equals(other.type);
    }

    @Override
    public int hashCode() {
        return type.hashCode();
    }

    @Override
    public String toString() {
        return type.getTypeName();
    }
}
