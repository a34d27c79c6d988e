package dev.idempotency.mcp;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.internal.Durations;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * A bean's {@code @Idempotent} method as a tool. The call goes through the bean as given, that is through its Spring
 * proxy and so the aspect: the aspect claims the key, joins the transaction and asks the gate, exactly as for any
 * other caller. The MCP key reaches the aspect as the method's {@code String idempotencyKey} parameter, which the key
 * expression must use; the other parameters are the tool's arguments.
 */
final class BeanMethodBinding extends ToolBinding {

    private final @Nullable Object bean;
    private final Method method;
    private final Idempotent annotation;
    private final String operation;
    private final String name;
    private final Parameter[] parameters;
    private final int keyIndex;
    private final List<InputSchemas.Field> fields;
    private final boolean openWorld;

    /** @param bean the bean to call, or null for a binding that only describes the tool (the manifest) */
    BeanMethodBinding(@Nullable Object bean, Method method, Method annotated, Idempotent annotation) {
        this.bean = bean;
        this.method = method;
        this.annotation = annotation;
        this.operation = annotation.operation().isEmpty()
                ? annotated.getDeclaringClass().getSimpleName() + "." + annotated.getName() : annotation.operation();
        this.name = operation.replaceAll("[^A-Za-z0-9_.-]", "_");
        this.parameters = annotated.getParameters();
        McpTool marked = annotated.getDeclaringClass().getAnnotation(McpTool.class);
        this.openWorld = marked == null || marked.openWorld();
        int key = -1;
        List<InputSchemas.Field> f = new ArrayList<>();
        for (int i = 0; i < parameters.length; i++) {
            Parameter p = parameters[i];
            if (!p.isNamePresent()) {
                throw new IllegalArgumentException(where() + " was compiled without -parameters: its parameters have"
                        + " no names to be a tool's arguments; compile with -parameters");
            }
            if (p.getName().equals(McpMeta.KEY_ARGUMENT)) {
                if (p.getType() != String.class) {
                    throw new IllegalArgumentException("parameter idempotencyKey of " + where() + " must be a String");
                }
                key = i;
            } else if (p.getName().equals(McpMeta.CONFIRMATION_ARGUMENT)) {
                throw new IllegalArgumentException(where() + " has a parameter named confirmationToken, which the"
                        + " MCP adapter reads itself; rename it");
            } else {
                f.add(new InputSchemas.Field(p.getName(), p.getParameterizedType(),
                        InputSchemas.optional(p.getType(), p.getAnnotatedType())));
            }
        }
        this.keyIndex = key;
        this.fields = List.copyOf(f);
        InputSchemas.check(fields, where());
        if (annotation.tier() != Tier.READ_ONLY) {
            if (keyIndex < 0 || !annotation.key().contains("#" + McpMeta.KEY_ARGUMENT)) {
                throw new IllegalArgumentException(where() + " is " + annotation.tier() + ": as an MCP tool its key"
                        + " must come from outside the model; add a parameter String idempotencyKey and key on it,"
                        + " such as key = \"'REFUND:' + #idempotencyKey\" (its key is '" + annotation.key() + "')");
            }
            if (bean != null && !proxied(bean)) {
                throw new IllegalArgumentException(where() + " is " + annotation.tier() + " but the bean "
                        + bean.getClass().getName() + " is not a Spring proxy: its @Idempotent methods would run"
                        + " unprotected; pass the bean from the application context");
            }
        }
    }

    /** Every {@code @Idempotent} method the bean's class (or its interfaces and superclasses) declares. */
    static List<ToolBinding> of(Object bean) {
        Class<?> type = bean.getClass();
        Set<Class<?>> hierarchy = new LinkedHashSet<>();
        Class<?> user = type.getName().contains("$$") ? type.getSuperclass() : type;
        for (Class<?> c = user; c != null && c != Object.class; c = c.getSuperclass()) {
            hierarchy.add(c);
            collectInterfaces(c, hierarchy);
        }
        List<ToolBinding> bindings = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Method m : type.getMethods()) {
            if (m.getDeclaringClass() == Object.class || !seen.add(m.getName() + List.of(m.getParameterTypes()))) {
                continue;
            }
            for (Class<?> c : hierarchy) {
                Method declared = declared(c, m);
                Idempotent a = declared == null ? null : declared.getAnnotation(Idempotent.class);
                if (a != null) {
                    bindings.add(new BeanMethodBinding(bean, m, declared, a));
                    break;
                }
            }
        }
        if (bindings.isEmpty()) {
            throw new IllegalArgumentException("the bean " + user.getName() + " has no public @Idempotent method to"
                    + " make a tool of");
        }
        return bindings;
    }

    private static void collectInterfaces(Class<?> c, Set<Class<?>> into) {
        for (Class<?> i : c.getInterfaces()) {
            if (into.add(i)) {
                collectInterfaces(i, into);
            }
        }
    }

    private static @Nullable Method declared(Class<?> c, Method m) {
        try {
            return c.getDeclaredMethod(m.getName(), m.getParameterTypes());
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static boolean proxied(Object bean) {
        return Proxy.isProxyClass(bean.getClass()) || bean.getClass().getName().contains("$$");
    }

    @Override
    String name() {
        return name;
    }

    @Override
    @Nullable String title() {
        return null;
    }

    @Override
    boolean openWorld() {
        return openWorld;
    }

    @Override
    String description() {
        return operation + " (" + annotation.tier() + ")";
    }

    @Override
    String operation() {
        return operation;
    }

    @Override
    Tier tier() {
        return annotation.tier();
    }

    @Override
    Duration ttl() {
        return Durations.parse(annotation.ttl(), "ttl of " + operation);
    }

    @Override
    Duration lockTimeout() {
        return Durations.parse(annotation.lockTimeout(), "lockTimeout of " + operation);
    }

    @Override
    List<InputSchemas.Field> fields() {
        return fields;
    }

    @Override
    String where() {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName();
    }

    @Override
    Object decode(JsonMapper mapper, Map<String, Object> arguments) {
        Set<String> unknown = new HashSet<>(arguments.keySet());
        Object[] values = new Object[parameters.length];
        for (int i = 0; i < parameters.length; i++) {
            if (i == keyIndex) {
                continue;
            }
            Parameter p = parameters[i];
            unknown.remove(p.getName());
            Object raw = arguments.get(p.getName());
            if (raw == null && p.getType().isPrimitive()) {
                throw new IllegalArgumentException("argument '" + p.getName() + "' is required");
            }
            values[i] = raw == null ? null
                    : mapper.convertValue(raw, mapper.getTypeFactory().constructType(p.getParameterizedType()));
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown arguments " + unknown);
        }
        return values;
    }

    @Override
    @Nullable Object invoke(Object decoded, String key) throws Exception {
        if (bean == null) {
            throw new IllegalStateException(where() + " is described, not bound to a bean");
        }
        Object[] values = ((Object[]) decoded).clone();
        if (keyIndex >= 0) {
            values[keyIndex] = key;
        }
        try {
            return method.invoke(bean, values);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
