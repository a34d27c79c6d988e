package dev.idempotency.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.MethodExecutor;
import org.springframework.expression.spel.support.ReflectiveMethodResolver;

/**
 * The methods a key expression may call: those that only read. A key is computed before the fingerprint and before
 * the method runs, so an expression such as {@code #p0.setId('x')} or {@code #p1.clear()} would change the arguments
 * the method then receives; every such call is refused, naming the method.
 *
 * <p>Allowed: getters ({@code getX()}, {@code isX()}, no parameters, a result), record accessors, {@code toString()},
 * and any public method of the immutable value types {@code String}, the boxed numbers, {@code BigDecimal},
 * {@code BigInteger}, {@code Boolean}, {@code Character}, {@code UUID}, {@code java.time} values and enums
 * ({@code name()}, {@code ordinal()}); on a collection or map, {@code size()}, {@code isEmpty()}, {@code contains},
 * {@code containsKey}, {@code containsValue}, {@code get}, {@code getOrDefault}, {@code indexOf},
 * {@code lastIndexOf}, {@code getFirst()}, {@code getLast()}. Static methods only when type references are opted in.
 */
final class ReadOnlyMethods extends ReflectiveMethodResolver {

    private static final Set<Class<?>> VALUE_TYPES = Set.of(String.class, Integer.class, Long.class, Short.class,
            Byte.class, Double.class, Float.class, BigDecimal.class, BigInteger.class, Boolean.class, Character.class,
            UUID.class);

    /** What a collection or map answers without changing. */
    private static final Set<String> COLLECTION_READS = Set.of("size", "isEmpty", "contains", "containsKey",
            "containsValue", "get", "getOrDefault", "indexOf", "lastIndexOf", "getFirst", "getLast");

    private final boolean statics;

    /** @param statics whether static methods may be called (type references are opted in) */
    ReadOnlyMethods(boolean statics) {
        this.statics = statics;
    }

    @Override
    public @Nullable MethodExecutor resolve(EvaluationContext context, Object target, String name,
            List<TypeDescriptor> argumentTypes) throws AccessException {
        if (target instanceof Class<?> && !statics) {
            return null;
        }
        MethodExecutor found = super.resolve(context, target, name, argumentTypes);
        if (found == null && !(target instanceof Class<?>)) {
            for (Method m : target.getClass().getMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == argumentTypes.size()) {
                    throw new AccessException("a key expression may only read, and " + m.getDeclaringClass().getName()
                            + "." + name + "(...) is neither a getter, a record accessor nor a method of String or"
                            + " a number: it could change the arguments before the method runs");
                }
            }
        }
        return found;
    }

    @Override
    protected boolean isCandidateForInvocation(Method method, Class<?> targetClass) {
        if (Modifier.isStatic(method.getModifiers())) {
            return statics;
        }
        return readsOnly(method, targetClass);
    }

    /** Whether {@code method}, called on a {@code targetClass}, only reads. */
    static boolean readsOnly(Method method, Class<?> targetClass) {
        String name = method.getName();
        int parameters = method.getParameterCount();
        if (name.equals("toString") && parameters == 0) {
            return true;
        }
        if (method.getDeclaringClass() == Object.class || method.getDeclaringClass() == Class.class) {
            return false;
        }
        if (isValueType(targetClass)) {
            return true;
        }
        if ((java.util.Collection.class.isAssignableFrom(targetClass)
                || java.util.Map.class.isAssignableFrom(targetClass)) && COLLECTION_READS.contains(name)) {
            return true;
        }
        if (targetClass.isEnum() || Enum.class.isAssignableFrom(targetClass)) {
            return (name.equals("name") || name.equals("ordinal")) && parameters == 0;
        }
        if (parameters != 0 || method.getReturnType() == void.class) {
            return false;
        }
        if (isGetterName(name, "get") || isGetterName(name, "is")) {
            return true;
        }
        if (targetClass.isRecord()) {
            for (RecordComponent c : targetClass.getRecordComponents()) {
                if (c.getName().equals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean isValueType(Class<?> type) {
        return VALUE_TYPES.contains(type) || type.getPackageName().equals("java.time");
    }

    private static boolean isGetterName(String name, String prefix) {
        return name.length() > prefix.length() && name.startsWith(prefix)
                && Character.isUpperCase(name.charAt(prefix.length()));
    }
}
