package dev.idempotency.mcp;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.modelcontextprotocol.spec.McpSchema;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tool list of an application from its build, without running it: every operation of the annotation processor's
 * {@code META-INF/idempotency/operations.json} on the class path, as {@link McpIdempotentTools.Builder#bean} would
 * make it a tool (the classes are loaded to read parameter names and types; no bean is made, nothing runs). For
 * review in a pull request:
 *
 * <pre>{@code
 * java -cp "target/classes:$(cat classpath.txt)" dev.idempotency.mcp.McpManifest > tools.json
 * }</pre>
 *
 * A writing operation whose key is not the adapter's {@code idempotencyKey} (a key the model would write) is listed
 * under {@code refused} with the reason, and {@code main} exits with status 1.
 */
public final class McpManifest {

    /**
     * @param tools   the tools, as {@code tools/list} would show them with an {@link McpConfirmations} gate
     * @param refused one sentence per operation that cannot be a tool, naming it and the fix
     */
    public record Manifest(List<McpSchema.Tool> tools, List<String> refused) {
    }

    private McpManifest() {
    }

    /** The manifest of every {@code operations.json} that {@code loader} sees. */
    public static Manifest read(ClassLoader loader) {
        List<McpSchema.Tool> tools = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        IdempotencyAdmin admin = IdempotencyAdmin.builder(new InMemoryIdempotencyStore()).classLoader(loader).build();
        for (IdempotencyAdmin.Operation op : admin.operations()) {
            try {
                Method method = method(loader, op);
                Idempotent annotation = method.getAnnotation(Idempotent.class);
                if (annotation == null) {
                    throw new IllegalArgumentException(op.className() + "." + op.method()
                            + " is no longer annotated @Idempotent: rebuild");
                }
                tools.add(McpIdempotentTools.tool(new BeanMethodBinding(null, method, method, annotation),
                        "elicitation", true));
            } catch (IllegalArgumentException | ReflectiveOperationException e) {
                refused.add(op.name() + ": " + e.getMessage());
            }
        }
        return new Manifest(List.copyOf(tools), List.copyOf(refused));
    }

    private static Method method(ClassLoader loader, IdempotencyAdmin.Operation op)
            throws ReflectiveOperationException {
        Class<?> type = Class.forName(op.className(), false, loader);
        Class<?>[] parameters = new Class<?>[op.parameterTypes().size()];
        for (int i = 0; i < parameters.length; i++) {
            parameters[i] = type(op.parameterTypes().get(i), loader);
        }
        return type.getDeclaredMethod(op.method(), parameters);
    }

    private static Class<?> type(String name, ClassLoader loader) throws ClassNotFoundException {
        if (name.endsWith("[]")) {
            return type(name.substring(0, name.length() - 2), loader).arrayType();
        }
        return switch (name) {
            case "boolean" -> boolean.class;
            case "byte" -> byte.class;
            case "short" -> short.class;
            case "char" -> char.class;
            case "int" -> int.class;
            case "long" -> long.class;
            case "float" -> float.class;
            case "double" -> double.class;
            default -> Class.forName(name, false, loader);
        };
    }

    /** Prints the manifest as JSON ({@code {"tools": [...], "refused": [...]}}); exits 1 when one is refused. */
    public static void main(String[] args) {
        Manifest manifest = read(Thread.currentThread().getContextClassLoader());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tools", manifest.tools());
        out.put("refused", manifest.refused());
        System.out.println(JsonMapper.builder().build().writerWithDefaultPrettyPrinter().writeValueAsString(out));
        if (!manifest.refused().isEmpty()) {
            System.exit(1);
        }
    }
}
